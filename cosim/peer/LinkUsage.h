#pragma once
// How busy each link of a co-simulated fabric was, as the text a network peer returns on its
// TERMINATE answer (cosim/PROTOCOL.md section 6, since 1.2; docs/cosim-ns3.md):
//
//     etsim-link-usage 1
//     link 3 335608832 16777216        # link index, busy time ps, payload bytes
//
// Links that carried nothing may be left out. SystemC-free: the adapter writes it, the host
// parses it.

#include <cstdint>
#include <string>
#include <vector>

namespace etsim::cosim {

struct RemoteLinkUsage {
    /// Index of the link in the fabric description (its `link` lines).
    std::uint32_t link = 0;
    /// Time the link spent transmitting, ps.
    std::uint64_t busyPs = 0;
    /// Payload bytes it carried (headers excluded), B.
    std::uint64_t bytes = 0;
};

/// The text for `links`, one line each, in the given order.
std::string encodeLinkUsage(const std::vector<RemoteLinkUsage>& links);

/// True when `text` starts like a link-usage report (a peer may answer TERMINATE with another
/// text or none).
bool isLinkUsage(const std::string& text);

/// Parses the text into one entry per link of a fabric of `linkCount` links (index = link;
/// links not listed are zero). Throws CosimError naming the line and the problem: a missing or
/// unknown version, an unknown keyword, a malformed field, a link index out of range, a link
/// listed twice.
std::vector<RemoteLinkUsage> parseLinkUsage(const std::string& text, std::size_t linkCount);

} // namespace etsim::cosim
