#pragma once
// The attributes of a Chakra algorithm trace's node that the loader (ChakraAlgorithm.cpp)
// reads, found in one pass over them: a program has millions of nodes, each with about nine
// attributes.

#include "et_driver/NodeView.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace etsim::platform {

// What the loader reads of a node:
// - the chunk attributes: the last of each name (a text attribute only when it is a
//   string_val; an offset or count only from an int64_val or uint64_val, else 0);
// - comm_src, comm_dst, comm_tag and comm_size as TraceNode's getters give them
//   (NodeView::integer).
struct ChakraNodeAttrs {
    std::optional<std::string_view> op;
    std::optional<std::string_view> srcBuf;
    std::optional<std::string_view> dstBuf;
    std::int64_t srcOff = 0;
    std::int64_t dstOff = 0;
    std::int64_t count = 1;
    std::optional<std::int64_t> commSrc;
    std::optional<std::int64_t> commDst;
    std::optional<std::int64_t> commTag;
    std::optional<std::int64_t> commSize;
};

ChakraNodeAttrs chakraNodeAttrs(const et::NodeView& node);

} // namespace etsim::platform
