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

/// Parses `text` (named `fileName` in messages).
net::CollectiveProgram parseMsccl(const std::string& text, const std::string& fileName);

/// The first reader parseMsccl tries, alone: the program when `text` keeps to the XML that
/// programs are written in (elements, attributes in single or double quotes, blanks; no DTD,
/// references, CDATA, comments, processing instructions, text or CR) and the program has no
/// problem; nothing otherwise, for libxml2 to read and report.
std::optional<net::CollectiveProgram> parseMscclSubset(std::string_view text,
                                                       const std::string& fileName);

/// The reader parseMsccl falls back to, alone (libxml2's): every message comes from it.
net::CollectiveProgram parseMscclWithLibxml2(std::string_view text, const std::string& fileName);

/// Reads and parses a file.
net::CollectiveProgram loadMsccl(const std::string& path);

} // namespace etsim::platform
