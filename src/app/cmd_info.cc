// Placeholder until the subcommand lands (being written now).
#include "app/commands.h"
namespace mneme::app {
void AddInfoCommand(CLI::App&) {}
}  // namespace mneme::app
