#include "apps/TraceImport.h"

#include "importers/pytorch/PytorchImport.h"
#include "kernel/Error.h"

#include <iostream>
#include <memory>

namespace etsim::apps {

namespace {

namespace fs = std::filesystem;

struct ImportOptions {
    std::vector<std::string> host;
    std::vector<std::string> kineto;
    std::string output;
    bool gpuOnly = false;
    bool noSync = false;
    bool dropUnlinked = false;
    bool gzip = false;
    bool json = false;
};

ExitCode runImport(const ImportOptions& options)
{
    importers::pytorch::ImportRequest request;
    for (const std::string& file : options.host)
        request.hostFiles.emplace_back(file);
    for (const std::string& file : options.kineto)
        request.kinetoFiles.emplace_back(file);
    request.prefix = options.output;
    request.gzip = options.gzip;
    request.options.hostOps = !options.gpuOnly;
    request.options.syncEdges = !options.noSync;
    request.options.unlinkedKernels = !options.dropUnlinked;
    std::error_code error;
    for (const fs::path& file : request.hostFiles)
        if (!fs::is_regular_file(file, error)) {
            std::cerr << "etsim trace import pytorch: no such file: " << file.string() << "\n";
            return ExitCode::CannotStart;
        }
    for (const fs::path& file : request.kinetoFiles)
        if (!fs::is_regular_file(file, error)) {
            std::cerr << "etsim trace import pytorch: no such file: " << file.string() << "\n";
            return ExitCode::CannotStart;
        }
    fs::path folder = request.prefix.parent_path();
    if (!folder.empty() && !fs::is_directory(folder, error)) {
        std::cerr << "etsim trace import pytorch: -o " << options.output << ": the folder "
                  << folder.string() << " does not exist; create it first\n";
        return ExitCode::CannotStart;
    }
    importers::pytorch::ImportResult result;
    try {
        result = importers::pytorch::importPytorch(request);
    } catch (const Error& e) {
        std::cerr << "etsim trace import pytorch: " << e.what() << "\n";
        return ExitCode::InputProblem;
    }
    if (options.json)
        std::cout << importers::pytorch::summaryJson(result).dump(2) << "\n";
    else
        importers::pytorch::printSummary(result, std::cout);
    return ExitCode::Success;
}

} // namespace

void addTraceImportCommand(CLI::App& trace, ExitCode& result)
{
    auto options = std::make_shared<ImportOptions>();
    CLI::App* import =
        trace.add_subcommand("import", "Convert another tool's traces into Chakra ETs");
    import->require_subcommand(1);
    CLI::App* pytorch = import->add_subcommand(
        "pytorch", "PyTorch host execution traces (+ Kineto traces) -> PREFIX.<rank>.et");
    pytorch->add_option("--host", options->host, "Host execution trace per rank (JSON, .gz ok)")
        ->required();
    pytorch->add_option("--kineto", options->kineto, "Kineto trace per rank (JSON, .gz ok)");
    pytorch->add_option("-o,--output", options->output, "Output prefix DIR/NAME")->required();
    pytorch->add_flag("--gpu-only",
                      options->gpuOnly,
                      "Keep GPU ops only (host order carried through); default: host ops too");
    pytorch->add_flag("--no-sync-edges",
                      options->noSync,
                      "Leave out CPU-GPU synchronisation edges; default: kept");
    pytorch->add_flag("--drop-unlinked-kernels",
                      options->dropUnlinked,
                      "Drop GPU ops whose launch is not in the Kineto trace; default: kept");
    pytorch->add_flag("--gzip", options->gzip, "Write PREFIX.<rank>.et.gz");
    pytorch->add_flag("--json", options->json, "Print the summary as JSON");
    pytorch->callback([options, &result]() { result = runImport(*options); });
}

} // namespace etsim::apps
