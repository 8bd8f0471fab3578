// etsim-rtl: a co-simulation peer that runs an accelerator compute engine's GEMMs on the RTL
// tile engine (rtl/gemm_tile.sv, Verilated), clock by clock.
//
//   etsim-rtl --endpoint unix:/tmp/etsim.sock | tcp:HOST:PORT | shm:/tmp/etsim.sock
//             [--listen] [--rows R --cols C] [--clock-hz F] [--mem-latency L]
//             [--full-folds] [--name NAME]
//
// The array size and clock come from the CONFIG text etsim sends (the accelerator's systolic
// tensor unit); --rows, --cols and --clock-hz override it. By default the peer connects to
// the endpoint (etsim listens, e.g. when it spawned this program). Exit code 0 after
// TERMINATE, 1 on errors.

#include "cosim/adapters/verilator/RtlPeer.h"
#include "cosim/peer/PeerMain.h"

#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>

namespace {

double number(const std::string& option, const char* text)
{
    char* end = nullptr;
    const double value = std::strtod(text, &end);
    if (end == text || *end != '\0' || !(value > 0))
        throw etsim::cosim::CosimError(option + ": \"" + text + "\" is not a positive number");
    return value;
}

} // namespace

int main(int argc, char** argv)
{
    using namespace etsim::cosim;
    using namespace etsim::rtl;
    try {
        RtlPeerOptions overrides;
        std::optional<std::uint32_t> rows;
        std::optional<std::uint32_t> cols;
        std::optional<double> clockHz;
        PeerOptions peer;
        peer.name = "etsim-rtl gemm_tile";
        PeerCommandLine line(argc, argv);
        while (line.next()) {
            const std::string& option = line.option();
            if (option == "--rows")
                rows = static_cast<std::uint32_t>(number(option, line.value()));
            else if (option == "--cols")
                cols = static_cast<std::uint32_t>(number(option, line.value()));
            else if (option == "--clock-hz")
                clockHz = number(option, line.value());
            else if (option == "--mem-latency")
                overrides.memoryLatency = static_cast<std::uint32_t>(number(option, line.value()));
            else if (option == "--full-folds")
                overrides.folds = FoldMode::Full;
            else if (option == "--name")
                peer.name = line.value();
            else
                throw CosimError("unknown option " + option);
        }
        std::unique_ptr<Transport> transport = line.open(peer.timeout);
        // The lookahead check happens in HELLO, before CONFIG names the array: promise the
        // smallest GEMM at the memory latency and the fastest clock we may be given.
        RtlPeerOptions promise = overrides;
        promise.clockHz = clockHz.value_or(overrides.clockHz);
        peer.minLatencyPs = minimumGemmPs(promise);
        PeerSession session(std::move(transport), peer);
        session.accept();
        RtlPeerOptions options = applyDescription(overrides, session.config());
        if (rows)
            options.rows = *rows;
        if (cols)
            options.cols = *cols;
        if (clockHz)
            options.clockHz = *clockHz;
        std::unique_ptr<GemmTile> tile;
        try {
            tile = makeGemmTile(options.rows, options.cols);
            if (session.mode() == SyncMode::Conservative &&
                session.lookaheadPs() > minimumGemmPs(options))
                throw CosimError("lookahead " + std::to_string(session.lookaheadPs()) +
                                 " ps is longer than the shortest GEMM on this tile (" +
                                 std::to_string(minimumGemmPs(options)) +
                                 " ps: memory latency + 3 cycles); lower it");
        } catch (const CosimError& error) {
            session.fail(error.what());
            throw;
        }
        const RtlPeerReport report = runRtlPeer(session, *tile, options);
        std::cerr << "etsim-rtl: " << options.rows << "x" << options.cols << " tile, "
                  << report.gemms << " GEMMs, " << report.refused << " refused, " << report.cycles
                  << " cycles charged, " << report.simulatedEdges << " clock edges simulated in "
                  << report.rtlSeconds << " s ("
                  << (report.rtlSeconds > 0 ? report.simulatedEdges / report.rtlSeconds : 0.0)
                  << " cycles/s)\n";
        return 0;
    } catch (const std::exception& error) {
        std::cerr << "etsim-rtl: " << error.what() << '\n';
        return 1;
    }
}
