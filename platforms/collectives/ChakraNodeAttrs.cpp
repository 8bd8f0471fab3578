#include "platforms/collectives/ChakraNodeAttrs.h"

#include "et_driver/TraceCodec.h"
#include "et_driver/proto/et_def.pb.h"

namespace etsim::platform {

namespace {

namespace pb = ChakraProtoMsg;

enum class LoaderAttr {
    Other,
    ChunkOp,
    SrcBuf,
    DstBuf,
    SrcOff,
    DstOff,
    ChunkCount,
    CommSrc,
    CommDst,
    CommTag,
    CommSize
};

// By length first: each comparison is then one or two word loads.
LoaderAttr loaderAttr(std::string_view name)
{
    switch (name.size()) {
    case 7:
        return name == "src_buf"   ? LoaderAttr::SrcBuf
               : name == "dst_buf" ? LoaderAttr::DstBuf
               : name == "src_off" ? LoaderAttr::SrcOff
               : name == "dst_off" ? LoaderAttr::DstOff
                                   : LoaderAttr::Other;
    case 8:
        return name == "comm_src"   ? LoaderAttr::CommSrc
               : name == "comm_dst" ? LoaderAttr::CommDst
               : name == "comm_tag" ? LoaderAttr::CommTag
               : name == "chunk_op" ? LoaderAttr::ChunkOp
                                    : LoaderAttr::Other;
    case 9:
        return name == "comm_size" ? LoaderAttr::CommSize : LoaderAttr::Other;
    case 11:
        return name == "chunk_count" ? LoaderAttr::ChunkCount : LoaderAttr::Other;
    default:
        return LoaderAttr::Other;
    }
}

} // namespace

ChakraNodeAttrs chakraNodeAttrs(const et::NodeView& node)
{
    ChakraNodeAttrs attrs;
    for (const et::AttributeView& attr : node.attributes) {
        bool text = attr.valueCase == pb::AttributeProto::kStringVal;
        // int64_val, uint64_val, 0 for any other value (what the generated accessors give).
        auto number = [&] {
            return attr.valueCase == pb::AttributeProto::kInt64Val ||
                           attr.valueCase == pb::AttributeProto::kUint64Val
                       ? static_cast<std::int64_t>(attr.bits)
                       : 0;
        };
        // The first attribute TraceCodec decodes into the typed field.
        auto typed = [&](std::optional<std::int64_t>& value, et::Attr key) {
            if (!value && attr.plain && attr.integer)
                value = et::TraceCodec::typedValue(
                    key, et::TraceCodec::Integer{attr.isSigned, attr.bits});
        };
        switch (loaderAttr(attr.name)) {
        case LoaderAttr::ChunkOp:
            if (text)
                attrs.op = attr.text;
            break;
        case LoaderAttr::SrcBuf:
            if (text)
                attrs.srcBuf = attr.text;
            break;
        case LoaderAttr::DstBuf:
            if (text)
                attrs.dstBuf = attr.text;
            break;
        case LoaderAttr::SrcOff:
            attrs.srcOff = number();
            break;
        case LoaderAttr::DstOff:
            attrs.dstOff = number();
            break;
        case LoaderAttr::ChunkCount:
            attrs.count = number();
            break;
        case LoaderAttr::CommSrc:
            typed(attrs.commSrc, et::Attr::CommSrc);
            break;
        case LoaderAttr::CommDst:
            typed(attrs.commDst, et::Attr::CommDst);
            break;
        case LoaderAttr::CommTag:
            typed(attrs.commTag, et::Attr::CommTag);
            break;
        case LoaderAttr::CommSize:
            typed(attrs.commSize, et::Attr::CommSize);
            break;
        case LoaderAttr::Other:
            break;
        }
    }
    return attrs;
}

} // namespace etsim::platform
