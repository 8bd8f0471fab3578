#include "apps/ConfigCommands.h"

#include "kernel/Error.h"
#include "platforms/ConfigKeys.h"

#include <iostream>
#include <memory>
#include <string>

namespace etsim::apps {

namespace {

struct KeysOptions {
    std::string component;
    bool markdown = false;
};

ExitCode listKeys(const KeysOptions& options)
{
    std::vector<platform::ComponentKeys> tables;
    try {
        if (options.component.empty())
            tables = platform::configKeyTables();
        else
            tables.push_back(platform::configKeys(options.component));
    } catch (const Error& error) {
        std::cerr << "etsim config keys: " << error.what() << "\n";
        return ExitCode::CannotStart;
    }
    for (std::size_t i = 0; i < tables.size(); ++i) {
        const platform::ComponentKeys& table = tables[i];
        if (i > 0)
            std::cout << "\n";
        if (options.markdown) {
            if (tables.size() > 1)
                std::cout << "## " << table.component << " (" << table.doc << ")\n\n";
            std::cout << paramMarkdown(table.keys);
        } else {
            std::cout << "# " << table.component << " (" << table.doc << ")\n"
                      << paramListing(table.keys);
        }
    }
    return ExitCode::Success;
}

} // namespace

void addConfigCommands(CLI::App& app, ExitCode& result)
{
    CLI::App* config = app.add_subcommand("config", "What a platform file can say");
    config->require_subcommand(1);
    auto options = std::make_shared<KeysOptions>();
    CLI::App* keys = config->add_subcommand(
        "keys", "List the keys of a platform file with their unit, default and help");
    keys->add_option("component",
                     options->component,
                     "One component: platform, accel, hbm, fabric, fabric.dim, fabric.fat_tree "
                     "(default: all)");
    keys->add_flag("--markdown", options->markdown, "Print the tables docs/ holds");
    keys->callback([options, &result] { result = listKeys(*options); });
}

} // namespace etsim::apps
