#pragma once
// Helpers shared by the et_driver tests: where the real traces are, raw record splitting, and
// gzip, so tests can build good and bad trace files byte by byte.

#include "et_driver/TraceNode.h"
#include "et_driver/proto/et_def.pb.h"
#include "tests/support/SharedTraces.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace etsim::et::test {

using etsim::test::sharedTraces;

// The base-128 varint encoding of `value`.
std::string varint(uint64_t value);
// Splits a record stream (already decompressed) into the message bytes of each record; fails
// the calling test on a framing error.
std::vector<std::string> splitRecords(const std::string& stream);
std::string gzipBytes(const std::string& plain);
std::string gunzipBytes(const std::string& compressed);
// The file's record stream: its bytes, decompressed when they are gzip.
std::string recordStream(const std::filesystem::path& file);

// Every node of the trace file, by id.
std::map<uint64_t, TraceNode> nodesById(const std::filesystem::path& file);

// An attribute named `name` without a value yet.
ChakraProtoMsg::AttributeProto namedAttribute(const std::string& name);

// A node that uses every typed attribute, in non-canonical encodings, interleaved with
// attributes of every other value type and an unknown field.
TraceNode richNode(uint64_t id);

} // namespace etsim::et::test
