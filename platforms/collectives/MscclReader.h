#pragma once
// Reads an MSCCL program (the XML msccl-tools writes) into a CollectiveProgram.
//
//   <algo name nchunksperloop ngpus coll inplace proto nchannels ...>
//     <gpu id i_chunks o_chunks s_chunks>
//       <tb id send recv chan>
//         <step s type srcbuf srcoff dstbuf dstoff cnt depid deps hasdep/>
//
// Step types s, r, rrc, rrs, rcs, rrcs, cpy, re, nop. The steps of a threadblock run in order
// (each depends on the one before); depid/deps adds a dependency on step `deps` of threadblock
// `depid` of the same GPU. Messages of a connection (sender, receiver, channel) match in order,
// so a GPU may have only one threadblock sending to a peer on a channel (and one receiving).
// proto, nchannels, redop, minBytes, maxBytes, outofplace and hasdep are read and ignored
// (timing does not depend on them). Every other attribute or element, an unknown step type,
// a collective other than allreduce, allgather, reduce_scatter or alltoall, and any value out
// of range is refused with an etsim::Error naming the file, the line and the element.

#include "models/net/collectives/CollectiveProgram.h"

#include <optional>
#include <string>
#include <string_view>

namespace etsim::platform {

/// Parses `text` (named `fileName` in messages). `threads` read a large program's <gpu>
/// elements at once; the program and every message are the same for any number.
net::CollectiveProgram
parseMsccl(const std::string& text, const std::string& fileName, unsigned threads = 1);

/// The first reader parseMsccl tries, alone: the program when `text` keeps to the XML that
/// programs are written in (elements, attributes in single or double quotes, blanks; no DTD,
/// references, CDATA, comments, processing instructions, text or CR) and the program has no
/// problem; nothing otherwise, for libxml2 to read and report.
std::optional<net::CollectiveProgram>
parseMscclSubset(std::string_view text, const std::string& fileName, unsigned threads = 1);

/// How many pieces, read at once, parseMscclSubset splits `text` into for `threads`: each but
/// the first begins at a <gpu> tag, and none is smaller than 64 KiB.
std::size_t mscclPieces(std::string_view text, unsigned threads);

/// The reader parseMsccl falls back to, alone (libxml2's): every message comes from it.
net::CollectiveProgram parseMscclWithLibxml2(std::string_view text, const std::string& fileName);

/// Reads and parses a file.
net::CollectiveProgram loadMsccl(const std::string& path, unsigned threads = 1);

} // namespace etsim::platform
