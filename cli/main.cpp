#include "cli/app.hpp"
#include "runtime/parent_watch.hpp"

int main(int argc, char** argv) {
  liftx::runtime::watch_parent(); // a worker never outlives the liftx that started it
  return liftx::cli::run(argc, argv);
}
