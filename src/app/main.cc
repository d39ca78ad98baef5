// The single `mneme` binary. Each subcommand lives in its own cmd_*.cc and
// registers itself here; main only dispatches.
#include <CLI/CLI.hpp>

#include "app/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"Mneme: a stateful LLM inference server for GGUF models", "mneme"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("mneme 0.1.0"));
  mneme::app::AddInfoCommand(app);
  mneme::app::AddTokenizeCommands(app);
  mneme::app::AddRenderCommand(app);
  mneme::app::AddGenerateCommand(app);
  mneme::app::AddMakeModelCommand(app);
  mneme::app::AddBenchKvCommand(app);
  mneme::app::AddServeCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return mneme::app::ExitCode();
}
