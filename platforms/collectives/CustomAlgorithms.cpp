#include "platforms/collectives/CustomAlgorithms.h"

#include "kernel/Error.h"
#include "models/net/collectives/CustomAlgorithm.h"
#include "platforms/collectives/ChakraAlgorithm.h"
#include "platforms/collectives/MscclReader.h"

namespace etsim::platform {

std::shared_ptr<const net::CollectiveAlgorithmIf>
loadCustomAlgorithm(const net::CustomAlgorithmSource& source)
{
    auto program = std::make_shared<const net::CollectiveProgram>(
        source.format == net::CustomAlgorithmSource::Format::Msccl
            ? loadMsccl(source.path)
            : loadChakraAlgorithm(source.path));
    return std::make_shared<const net::CustomAlgorithm>(program);
}

void loadCustomAlgorithms(net::NetConfig& config)
{
    for (auto& list : config.customAlgorithms)
        for (auto& source : list) {
            if (!source || source->algorithm)
                continue;
            try {
                source->algorithm = loadCustomAlgorithm(*source);
            } catch (const ConfigError&) {
                throw;
            } catch (const Error& error) {
                source->location.fail(error.what());
            }
        }
}

} // namespace etsim::platform
