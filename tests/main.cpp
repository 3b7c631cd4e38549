// The doctest main, compiled once on its own: it is the slowest file to build.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
