#include "cli/app.hpp"

int main(int argc, char** argv) {
  return liftx::cli::run(argc, argv);
}
