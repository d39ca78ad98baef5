// Subcommands of the `mneme` binary. Each Add*Command registers its CLI11
// subcommand with a callback; the callback stores its exit status in
// SetExitCode so main can return it.
#pragma once

#include <CLI/CLI.hpp>

namespace mneme::app {

void AddInfoCommand(CLI::App& app);       // mneme info -m FILE.gguf
void AddTokenizeCommands(CLI::App& app);  // mneme tokenize / detokenize
void AddRenderCommand(CLI::App& app);     // mneme render
void AddGenerateCommand(CLI::App& app);   // mneme generate
void AddMakeModelCommand(CLI::App& app);  // mneme make-model
void AddBenchKvCommand(CLI::App& app);    // mneme bench-kv
void AddServeCommand(CLI::App& app);      // mneme serve

void SetExitCode(int code);
int ExitCode();

}  // namespace mneme::app
