// Placeholder until the subcommand lands (being written now).
#include "app/commands.h"
namespace mneme::app {
void AddRenderCommand(CLI::App&) {}
}  // namespace mneme::app
