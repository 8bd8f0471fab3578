#include "kernel/Extensions.h"

#include "kernel/Error.h"

#include <gtest/gtest.h>
#include <tlm>

#include <memory>
#include <string>

namespace etsim {
namespace {

// Every field differs from its default, so a field that clone() or copy_from() forgot shows.
EtNodeInfo fullInfo()
{
    EtNodeInfo info;
    info.rank = RankId{3};
    info.node = NodeId{1ULL << 40};
    info.kind = NodeKind::Collective;
    info.onHost = true;
    info.bytes = 64ULL << 20;
    info.flops = 123456789012345ULL;
    info.collective = CollectiveType::ReduceScatter;
    info.peer = RankId{5};
    info.tag = 77;
    info.group = ProcessGroupId{2};
    info.groupRanks = std::make_shared<const std::vector<RankId>>(
        std::vector<RankId>{RankId{1}, RankId{3}, RankId{5}});
    info.groupSequence = 9;
    info.involvedDims = 0b101;
    info.durationPs = 1500;
    info.dataType = DataType::Bf16;
    info.op = OperatorKind::Gemm;
    info.reduceOp = ReduceOp::Max;
    info.gemm = GemmShape{4096, 1024, 512, 8};
    info.setAttribute("stream", 2);
    info.setAttribute("efficiency", 0.75);
    info.setAttribute("op_name", "aten::mm");
    return info;
}

// Owns an extension returned by clone(); tlm_extension_base's destructor is protected.
struct FreeExtension {
    void operator()(tlm::tlm_extension_base* extension) const { extension->free(); }
};
using ExtensionPtr = std::unique_ptr<tlm::tlm_extension_base, FreeExtension>;

// A second extension type, to feed copy_from() something of the wrong kind.
class OtherExtension : public tlm::tlm_extension<OtherExtension> {
public:
    tlm::tlm_extension_base* clone() const override { return new OtherExtension; }
    void copy_from(const tlm::tlm_extension_base& /*other*/) override {}
};

TEST(EtNodeExtension, DefaultsMarkAnUnfilledExtension)
{
    EtNodeExtension extension;
    EXPECT_EQ(extension.info.kind, NodeKind::Invalid);
    EXPECT_EQ(extension.info.collective, CollectiveType::None);
    EXPECT_FALSE(extension.info.peer.has_value());
    EXPECT_FALSE(extension.info.group.has_value());
    EXPECT_FALSE(extension.info.gemm.has_value());
    EXPECT_TRUE(extension.info.attributes.empty());
    EXPECT_EQ(extension.info, EtNodeInfo{});
}

TEST(EtNodeExtension, CloneCopiesEveryField)
{
    EtNodeExtension original(fullInfo());
    ExtensionPtr copy(original.clone());
    auto* typed = dynamic_cast<EtNodeExtension*>(copy.get());
    ASSERT_NE(typed, nullptr);
    EXPECT_NE(typed, &original);
    EXPECT_EQ(typed->info, fullInfo());
    // The clone is independent of the original.
    typed->info.setAttribute("stream", 9);
    EXPECT_EQ(std::get<std::int64_t>(*original.info.findAttribute("stream")), 2);
}

TEST(EtNodeExtension, CopyFromReplacesEveryField)
{
    EtNodeInfo before;
    before.kind = NodeKind::Send;
    before.setAttribute("old", 1);
    EtNodeExtension target(before);
    EtNodeExtension source(fullInfo());
    target.copy_from(source);
    EXPECT_EQ(target.info, fullInfo());
    EXPECT_EQ(target.info.findAttribute("old"), nullptr);
}

TEST(EtNodeExtension, CopyFromAnotherTypeThrows)
{
    EtNodeExtension target(fullInfo());
    OtherExtension other;
    try {
        target.copy_from(other);
        FAIL() << "expected an error";
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(),
                     "EtNodeExtension::copy_from: the source extension has type "
                     "etsim::(anonymous namespace)::OtherExtension, not etsim::EtNodeExtension; "
                     "copy extensions only between slots of the same extension type");
    }
    EXPECT_EQ(target.info, fullInfo()) << "a failed copy must leave the target unchanged";
}

TEST(EtNodeExtension, EqualityNoticesSingleFieldChanges)
{
    const EtNodeInfo base = fullInfo();
    auto differs = [&base](auto change) {
        EtNodeInfo changed = base;
        change(changed);
        return changed != base;
    };
    EXPECT_TRUE(differs([](EtNodeInfo& i) { i.rank = RankId{4}; }));
    EXPECT_TRUE(differs([](EtNodeInfo& i) { i.node = NodeId{1}; }));
    EXPECT_TRUE(differs([](EtNodeInfo& i) { i.onHost = false; }));
    EXPECT_TRUE(differs([](EtNodeInfo& i) { i.flops += 1; }));
    EXPECT_TRUE(differs([](EtNodeInfo& i) { i.peer.reset(); }));
    EXPECT_TRUE(differs([](EtNodeInfo& i) { i.group = ProcessGroupId{0}; }));
    EXPECT_TRUE(differs([](EtNodeInfo& i) { i.reduceOp = ReduceOp::Sum; }));
    EXPECT_TRUE(differs([](EtNodeInfo& i) { i.groupRanks.reset(); }));
    EXPECT_TRUE(differs([](EtNodeInfo& i) {
        i.groupRanks = std::make_shared<const std::vector<RankId>>(std::vector<RankId>{RankId{1}});
    }));
    EXPECT_FALSE(differs([](EtNodeInfo& i) {
        i.groupRanks = std::make_shared<const std::vector<RankId>>(*i.groupRanks);
    }));
    EXPECT_TRUE(differs([](EtNodeInfo& i) { i.groupSequence = 10; }));
    EXPECT_TRUE(differs([](EtNodeInfo& i) { i.involvedDims = 1; }));
    EXPECT_TRUE(differs([](EtNodeInfo& i) { i.durationPs = 0; }));
    EXPECT_TRUE(differs([](EtNodeInfo& i) { i.gemm->batch = 1; }));
    EXPECT_TRUE(differs([](EtNodeInfo& i) { i.setAttribute("efficiency", 0.5); }));
    EXPECT_FALSE(differs([](EtNodeInfo& i) { i.setAttribute("stream", 2); }));
}

TEST(EtNodeExtension, TravelsWithDeepCopiedPayload)
{
    tlm::tlm_generic_payload original;
    original.set_extension(new EtNodeExtension(fullInfo()));
    tlm::tlm_generic_payload copy;
    copy.deep_copy_from(original);
    EtNodeExtension& copied = EtNodeExtension::get(copy);
    EXPECT_NE(&copied, EtNodeExtension::find(original));
    EXPECT_EQ(copied.info, fullInfo());
    // Both payloads own (and on destruction free) their extension.
}

TEST(EtNodeExtension, GetWithoutExtensionNamesPayload)
{
    tlm::tlm_generic_payload payload;
    payload.set_command(tlm::TLM_WRITE_COMMAND);
    payload.set_address(0x1f00);
    payload.set_data_length(256);
    EXPECT_EQ(EtNodeExtension::find(payload), nullptr);
    try {
        EtNodeExtension::get(payload);
        FAIL() << "expected an error";
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(),
                     "payload (write at 0x1f00, 256 bytes) carries no EtNodeExtension: the "
                     "initiator must attach one with set_extension() before sending the payload "
                     "to a model");
    }
}

TEST(EtNodeInfo, AttributesKeepTheirType)
{
    EtNodeInfo info;
    info.setAttribute("count", 3U);
    info.setAttribute("flag", true);
    info.setAttribute("scale", 1.5F);
    info.setAttribute("name", std::string("attn"));
    EXPECT_EQ(std::get<std::int64_t>(*info.findAttribute("count")), 3);
    EXPECT_EQ(std::get<std::int64_t>(*info.findAttribute("flag")), 1);
    EXPECT_DOUBLE_EQ(std::get<double>(*info.findAttribute("scale")), 1.5);
    EXPECT_EQ(std::get<std::string>(*info.findAttribute("name")), "attn");
    info.setAttribute("name", "softmax");
    EXPECT_EQ(std::get<std::string>(*info.findAttribute("name")), "softmax");
    EXPECT_EQ(info.attributes.size(), 4U);
    EXPECT_EQ(info.findAttribute("missing"), nullptr);
}

TEST(EtNodeInfo, GemmFlopsCountMultiplyAndAdd)
{
    EXPECT_EQ((GemmShape{4096, 1024, 512, 8}.flops()), 2ULL * 4096 * 1024 * 512 * 8);
    EXPECT_EQ((GemmShape{2, 3, 4}.flops()), 48U);
}

TEST(EtNodeInfo, EnumNamesAndSizes)
{
    EXPECT_STREQ(toString(NodeKind::MemLoad), "mem_load");
    EXPECT_STREQ(toString(NodeKind::Metadata), "metadata");
    EXPECT_STREQ(toString(CollectiveType::AllToAll), "all_to_all");
    EXPECT_STREQ(toString(CollectiveType::Barrier), "barrier");
    EXPECT_STREQ(toString(DataType::Fp8E4M3), "fp8_e4m3");
    EXPECT_STREQ(toString(OperatorKind::Normalization), "normalization");
    EXPECT_STREQ(toString(ReduceOp::Average), "average");
    EXPECT_STREQ(toString(static_cast<NodeKind>(200)), "?");
    EXPECT_EQ(dataTypeBytes(DataType::Fp64), 8U);
    EXPECT_EQ(dataTypeBytes(DataType::Bf16), 2U);
    EXPECT_EQ(dataTypeBytes(DataType::Fp8E5M2), 1U);
    EXPECT_EQ(dataTypeBytes(DataType::Int32), 4U);
    EXPECT_EQ(dataTypeBytes(DataType::Unknown), 0U);
}

} // namespace
} // namespace etsim
