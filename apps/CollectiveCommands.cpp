#include "apps/CollectiveCommands.h"

#include "kernel/Config.h"
#include "kernel/Error.h"
#include "kernel/Units.h"
#include "models/net/collectives/ProgramVerifier.h"
#include "platforms/collectives/ChakraAlgorithm.h"
#include "platforms/collectives/MscclReader.h"
#include "platforms/collectives/ProgramGen.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

namespace etsim::apps {

namespace {

namespace fs = std::filesystem;

struct GenOptions {
    std::string algorithm = "ring";
    std::string collective = "all_reduce";
    std::uint32_t ranks = 8;
    std::string format = "msccl";
    std::string bytes = "1 MiB";
    std::string out;
};

constexpr EnumName<CollectiveType> collectiveNames[] = {
    {"all_reduce", CollectiveType::AllReduce},
    {"reduce_scatter", CollectiveType::ReduceScatter},
    {"all_gather", CollectiveType::AllGather},
};

template <typename Table>
auto byName(const Table& table, const std::string& name, const char* option)
{
    std::string names;
    for (const auto& entry : table) {
        if (entry.name == name)
            return entry.value;
        names += (names.empty() ? "" : ", ") + std::string(entry.name);
    }
    throw Error(std::string(option) + " " + name + " is not one of " + names);
}

bool isXml(const std::string& path)
{
    return fs::path(path).extension() == ".xml";
}

ExitCode verify(const std::vector<std::string>& files, unsigned threads)
{
    ExitCode code = ExitCode::Success;
    for (const std::string& file : files) {
        bool xml = isXml(file);
        if (xml ? !fs::exists(file) : !fs::exists(file + ".0.et")) {
            std::cerr << "etsim collective verify: " << (xml ? file : file + ".0.et")
                      << ": no such file (give an MSCCL .xml file or an algorithm trace "
                         "prefix PREFIX, for PREFIX.<rank>.et)\n";
            return ExitCode::CannotStart;
        }
        try {
            // The same readers as a platform file's custom algorithms (etsim run).
            net::CollectiveProgram program = xml ? platform::loadMsccl(file, threads)
                                                 : platform::loadChakraAlgorithm(file, threads);
            net::VerifyResult result = net::verifyProgram(program);
            std::cout << file << ": " << program.rankCount() << " ranks, " << result.operations
                      << " operations, " << result.messages << " messages: ";
            if (result.dataChecked)
                std::cout << "verified, every rank holds the " << toString(program.type)
                          << " result\n";
            else
                std::cout << "messages match and nothing deadlocks; the file does not say "
                             "which chunks move, so the result was not checked\n";
        } catch (const Error& error) {
            std::cerr << "etsim collective verify: " << error.what() << "\n";
            code = ExitCode::InputProblem;
        }
    }
    return code;
}

ExitCode generate(const GenOptions& options)
{
    try {
        auto algorithm = byName(net::algorithmNames, options.algorithm, "--algorithm");
        auto collective = byName(collectiveNames, options.collective, "--collective");
        net::CollectiveProgram program =
            platform::generateProgram(algorithm, collective, options.ranks);
        if (options.format == "msccl") {
            std::string temporary = options.out + ".tmp";
            {
                std::ofstream out(temporary, std::ios::binary);
                out << platform::writeMsccl(program);
                if (!out.flush())
                    throw Error(options.out + ": cannot write");
            }
            fs::rename(temporary, options.out);
            std::cout << "wrote " << options.out << "\n";
        } else if (options.format == "chakra") {
            platform::writeChakraAlgorithm(
                program, options.out, Size::parse(options.bytes).bytes());
            std::cout << "wrote " << options.out << ".{0.." << options.ranks - 1 << "}.et\n";
        } else {
            throw Error("--format must be msccl or chakra, not " + options.format);
        }
    } catch (const std::exception& error) {
        std::cerr << "etsim gen collective: " << error.what() << "\n";
        return ExitCode::CannotStart;
    }
    return ExitCode::Success;
}

} // namespace

void addCollectiveCommands(CLI::App& app, ExitCode& result)
{
    CLI::App* collective = app.add_subcommand("collective", "Check custom collective algorithms");
    collective->require_subcommand(1);
    auto files = std::make_shared<std::vector<std::string>>();
    CLI::App* verifyCommand = collective->add_subcommand(
        "verify",
        "Prove that an MSCCL program (.xml) or algorithm traces (PREFIX for PREFIX.<rank>.et) "
        "compute their collective and cannot deadlock");
    verifyCommand->add_option("files", *files, "Programs to verify")->required();
    auto threads = std::make_shared<unsigned>(platform::defaultReadThreads());
    verifyCommand
        ->add_option("--threads",
                     *threads,
                     "Threads reading a program (algorithm trace files, or parts of a large MSCCL "
                     "file) at once; the result and the first error are the same for any number")
        ->check(CLI::Range(1U, 64U))
        ->capture_default_str();
    verifyCommand->callback([files, threads, &result]() { result = verify(*files, *threads); });

    CLI::App* gen = app.get_subcommand("gen");
    auto options = std::make_shared<GenOptions>();
    CLI::App* command = gen->add_subcommand(
        "collective", "A built-in collective algorithm as an MSCCL program or algorithm traces");
    command
        ->add_option("--algorithm",
                     options->algorithm,
                     "ring, direct, halving_doubling or double_binary_tree")
        ->capture_default_str();
    command
        ->add_option("--collective",
                     options->collective,
                     "all_reduce, reduce_scatter, all_gather or all_to_all")
        ->capture_default_str();
    command->add_option("--ranks", options->ranks, "Ranks of the group")->capture_default_str();
    command->add_option("--format", options->format, "msccl (one .xml file) or chakra")
        ->capture_default_str();
    command
        ->add_option("--bytes",
                     options->bytes,
                     "chakra: the collective size the messages' comm_size is cut from")
        ->capture_default_str();
    command
        ->add_option("--out",
                     options->out,
                     "msccl: the file to write; chakra: the prefix of PREFIX.<rank>.et")
        ->required();
    command->callback([options, &result]() { result = generate(*options); });
}

} // namespace etsim::apps
