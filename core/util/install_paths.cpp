// SPDX-License-Identifier: GPL-2.0-or-later
// install_paths.cpp: the shipped scenarios' folder, installed or in the source tree.
#include "util/install_paths.h"

#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <system_error>

#include <unistd.h>

#ifndef SCHEDLAB_BIN_TO_DATA
#define SCHEDLAB_BIN_TO_DATA "../share"
#endif
#ifndef SCHEDLAB_BIN_TO_LIBEXEC
#define SCHEDLAB_BIN_TO_LIBEXEC "../libexec"
#endif
#ifndef SCHEDLAB_BUILD_LIBEXEC
#define SCHEDLAB_BUILD_LIBEXEC ""
#endif
#ifndef SCHEDLAB_SOURCE_SCENARIOS_DIR
#define SCHEDLAB_SOURCE_SCENARIOS_DIR ""
#endif

namespace sched {

namespace fs = std::filesystem;

std::string shippedScenariosDir() {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const fs::path installed = (exe.parent_path() / SCHEDLAB_BIN_TO_DATA / "schedlab" / "scenarios").lexically_normal();
        if (fs::is_directory(installed, ec)) return installed.string();
    }
    const fs::path source = SCHEDLAB_SOURCE_SCENARIOS_DIR;
    if (!source.empty() && fs::is_directory(source, ec)) return source.string();
    return {};
}

std::string resolveScenarioPath(const std::string& arg) {
    std::error_code ec;
    if (arg.empty() || fs::exists(arg, ec) || arg.find('/') != std::string::npos) return arg;
    const std::string dir = shippedScenariosDir();
    if (dir.empty()) return arg;
    for (const std::string& name : {arg, arg + ".json"}) {
        const fs::path p = fs::path(dir) / name;
        if (fs::is_regular_file(p, ec)) return p.string();
    }
    return arg;
}

namespace {

std::string helperProgram(const char* env, const char* program) {
    if (const char* p = std::getenv(env)) return p;
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    const fs::path installed = ec ? fs::path() : (exe.parent_path() / SCHEDLAB_BIN_TO_LIBEXEC / "schedlab" / program).lexically_normal();
    const fs::path built = std::string_view(SCHEDLAB_BUILD_LIBEXEC).empty() ? fs::path() : fs::path(SCHEDLAB_BUILD_LIBEXEC) / program;
    for (const fs::path& p : {installed, built})
        if (!p.empty() && ::access(p.c_str(), X_OK) == 0) return p.string();
    return {};
}

}  // namespace

std::string traceReaderPath() { return helperProgram("SCHEDLAB_TRACE_READER", "schedlab-trace-reader"); }

std::string hwlocReaderPath() { return helperProgram("SCHEDLAB_HWLOC_READER", "schedlab-hwloc-reader"); }

}  // namespace sched
