// etsim-ref-peer: the reference co-simulation peer, a fixed-latency component.
//
//   etsim-ref-peer --endpoint unix:/tmp/etsim.sock | tcp:HOST:PORT | shm:/tmp/etsim.sock
//                  [--listen] [--latency-ps 1000000] [--ps-per-byte 0] [--stall-after N]
//                  [--bad-frame-after N] [--major M]
//
// By default it connects to the endpoint (etsim listens, e.g. when it spawned this program);
// with --listen it waits for etsim to connect. Exit code 0 after TERMINATE, 1 on errors.

#include "cosim/peer/FixedLatencyPeer.h"
#include "cosim/peer/PeerMain.h"

#include <iostream>
#include <string>

int main(int argc, char** argv)
{
    using namespace etsim::cosim;
    try {
        FixedLatencyOptions options;
        PeerOptions peer;
        peer.name = "ref-peer";
        PeerCommandLine line(argc, argv);
        while (line.next()) {
            const std::string& option = line.option();
            if (option == "--latency-ps")
                options.latencyPs = line.wholeNumber();
            else if (option == "--ps-per-byte")
                options.psPerByte = line.wholeNumber();
            else if (option == "--stall-after")
                options.stallAfter = line.wholeNumber();
            else if (option == "--bad-frame-after")
                options.badFrameAfter = line.wholeNumber();
            else if (option == "--major")
                peer.major = static_cast<std::uint8_t>(line.wholeNumber());
            else if (option == "--name")
                peer.name = line.value();
            else
                throw CosimError("unknown option " + option);
        }
        std::unique_ptr<Transport> transport = line.open(peer.timeout);
        peer.minLatencyPs = options.latencyPs;
        PeerSession session(std::move(transport), peer);
        session.accept();
        const FixedLatencyReport report = runFixedLatencyPeer(session, options);
        std::cerr << "ref-peer: " << report.requests << " requests, " << report.responses
                  << " responses, " << report.causalityViolations << " causality violations\n";
        return report.causalityViolations == 0 ? 0 : 1;
    } catch (const std::exception& error) {
        std::cerr << "ref-peer: " << error.what() << '\n';
        return 1;
    }
}
