// etsim-ns3: takes over a platform's fabric and carries its messages through ns-3.
//
//   etsim-ns3 --endpoint unix:/path | tcp:HOST:PORT | shm:/path [--listen] [--mtu 9000]
//             [--queue-packets 100000] [--timeout-ms 30000]
//
// etsim sends the fabric in CONFIG (NetworkCore::describe); each REQUEST is one message (node
// info: rank = source, peer = destination, bytes) that starts at the request's time; the
// RESPONSE carries the arrival time of its last packet. docs/cosim-ns3.md has the details.
// Exit code 0 after TERMINATE, 1 on any error (also sent to etsim as ERROR).

#include "cosim/adapters/ns3/FabricDescription.h"
#include "cosim/adapters/ns3/Ns3Network.h"
#include "cosim/peer/LinkUsage.h"
#include "cosim/peer/PeerMain.h"
#include "cosim/peer/PeerSession.h"

#include <chrono>
#include <iostream>
#include <optional>
#include <string>
#include <unordered_map>

namespace {

using namespace etsim::cosim;
using namespace etsim::cosim::ns3adapter;

struct Adapter {
    Ns3Options options;
    std::optional<FabricDescription> fabric;
    std::unique_ptr<Ns3Network> network;
    std::unordered_map<std::uint64_t, PeerSession::Arrival> pending;
    std::uint64_t nextFlow = 0;

    std::uint64_t configure(const std::string& text)
    {
        fabric = parseFabricDescription(text);
        network = std::make_unique<Ns3Network>(*fabric, options);
        return fabric->minRouteLatencyPs();
    }

    void inject(PeerSession::Arrival& arrival)
    {
        if (!arrival.request.node || !arrival.request.node->peer)
            throw CosimError("request " + std::to_string(arrival.id) +
                             " is not a fabric message: it needs node info with rank "
                             "(source), peer (destination) and bytes");
        const WireNodeInfo& node = *arrival.request.node;
        const std::uint64_t flow = nextFlow++;
        network->inject(flow, node.rank, *node.peer, node.bytes, arrival.timePs);
        pending.emplace(flow, std::move(arrival));
    }

    // Serves the run until TERMINATE; throws CosimError on any failure.
    void serve(PeerSession& session)
    {
        std::vector<PeerSession::Arrival> arrivals;
        while (session.advance(network->nextEventPs(), arrivals)) {
            for (PeerSession::Arrival& arrival : arrivals)
                inject(arrival);
            arrivals.clear();
            network->runUntil(session.bound());
            if (!network->failure().empty())
                throw CosimError(network->failure());
            for (const Ns3Completion& completion : network->takeCompletions()) {
                const auto found = pending.find(completion.flow);
                session.respond(found->second, completion.timePs, Response{});
                pending.erase(found);
            }
        }
    }
};

} // namespace

int main(int argc, char** argv)
{
    try {
        Ns3Options options;
        PeerOptions peer;
        peer.name = "ns-3 fabric";
        // Packets cannot be rewound: only conservative sync keeps ns-3 exact.
        peer.capabilities = capability::conservative;
        PeerCommandLine line(argc, argv);
        while (line.next()) {
            const std::string& option = line.option();
            if (option == "--mtu")
                options.mtu = static_cast<std::uint32_t>(line.wholeNumber());
            else if (option == "--queue-packets")
                options.queuePackets = static_cast<std::uint32_t>(line.wholeNumber());
            else if (option == "--timeout-ms")
                peer.timeout = std::chrono::milliseconds(line.wholeNumber());
            else
                throw CosimError("unknown option " + option +
                                 " (known: --endpoint, --listen, --mtu, --queue-packets, "
                                 "--timeout-ms)");
        }
        std::unique_ptr<Transport> transport = line.open(peer.timeout);

        const auto started = std::chrono::steady_clock::now();
        Adapter adapter;
        adapter.options = options;
        // The fabric arrives in CONFIG: it is built then, so a fabric ns-3 cannot carry is
        // refused in the handshake with the reason.
        peer.configure = [&adapter](const std::string& text) { return adapter.configure(text); };
        // At the end of the run etsim learns how busy each link was (its report's link
        // utilisation); the text goes on the TERMINATE answer (PROTOCOL.md section 6).
        peer.farewell = [&adapter] {
            return adapter.network ? encodeLinkUsage(adapter.network->linkUsage()) : std::string();
        };
        PeerSession session(std::move(transport), peer);
        session.accept();
        try {
            adapter.serve(session);
        } catch (const CosimError& error) {
            session.fail(error.what());
            throw;
        }
        const Ns3Counters& counts = adapter.network->counters();
        const double wall =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        std::cerr << "etsim-ns3: " << counts.flows << " messages, " << counts.packets
                  << " packets, " << counts.windows << " windows; wall " << wall
                  << " s, of which ns-3 ran " << counts.runSeconds << " s\n";
        return 0;
    } catch (const std::exception& error) {
        std::cerr << "etsim-ns3: " << error.what() << '\n';
        return 1;
    }
}
