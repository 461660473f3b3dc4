// Links one liftx library whole with its declared dependencies (see CMakeLists.txt).
int main() {
  return 0;
}
