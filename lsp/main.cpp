#include "language_server.h"

int main(int argc, char** argv) { return run_language_server(argc, argv); }
