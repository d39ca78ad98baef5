// Exit status shared by the subcommand callbacks.
#include "app/commands.h"

namespace mneme::app {
namespace {
int g_exit_code = 0;  // written once by the one subcommand that runs
}  // namespace

void SetExitCode(int code) { g_exit_code = code; }
int ExitCode() { return g_exit_code; }

}  // namespace mneme::app
