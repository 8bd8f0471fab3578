// Running a Chakra trace on a platform from your own sc_main, with the etsim libraries:
//
//     run_et PLATFORM TRACE [key.path=value ...]
//
// PLATFORM is a platform YAML file or a bundled preset (hgx_h100, ...), TRACE a trace prefix
// or folder. The platform is elaborated from structs here, so a program can change any value
// before building it; Platform and runJob are the two levels of the API (platforms/Job.h).

#include "kernel/Simulation.h"
#include "kernel/Stats.h"
#include "platforms/Job.h"
#include "platforms/Platform.h"
#include "platforms/PlatformConfig.h"

#include <systemc>

#include <algorithm>
#include <exception>
#include <iostream>
#include <vector>

int sc_main(int argc, char* argv[])
{
    if (argc < 3) {
        std::cerr << "usage: run_et PLATFORM TRACE [key.path=value ...]\n";
        return 2;
    }
    try {
        std::vector<etsim::platform::Override> overrides;
        for (int i = 3; i < argc; ++i)
            overrides.push_back(etsim::platform::parseOverride(argv[i]));
        etsim::platform::PlatformConfig config = etsim::platform::loadPlatform(argv[1], overrides);
        // Structs can be edited before elaboration: here, a 5 % better HBM efficiency.
        config.hbm.analytic.efficiency = std::min(1.0, config.hbm.analytic.efficiency * 1.05);

        etsim::platform::TraceInput trace(argv[2]);
        etsim::Simulation simulation;
        etsim::StatGroup stats("platform");
        etsim::platform::Platform platform("platform", config, simulation, stats);
        platform.attach(trace.sources());
        etsim::RunResult result = simulation.run();

        std::uint64_t finishPs = 0;
        for (const etsim::et::RankDriver* driver : platform.drivers())
            finishPs = std::max(finishPs, driver->finishPs());
        std::cout << "ranks: " << platform.rankCount()
                  << ", outcome: " << etsim::runOutcomeName(result.outcome)
                  << ", simulated time: " << etsim::Time::fromPs(finishPs)
                  << ", collectives: " << platform.fabric().collectives().size() << "\n";
        etsim::et::checkFinished(platform.drivers());
        return 0;
    } catch (const std::exception& error) {
        std::cerr << "run_et: " << error.what() << "\n";
        return 1;
    }
}
