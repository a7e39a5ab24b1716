// SPDX-License-Identifier: GPL-2.0-or-later
// core_output_files_test.cpp: OutputSet (a set of files renamed into place only when all are
// complete, no temporary left on failure) and the interrupt cleanup, by a schedlab-cli stopped
// with SIGINT and SIGTERM mid-run (no debris).
#include "util/input_error.h"
#include "util/output_files.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <csignal>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using sched::InputError;
using sched::OutputSet;

namespace {

struct TempDir {
    fs::path p;
    explicit TempDir(const char* name) : p(fs::temp_directory_path() / fmt::format("schedlab-{}-{}", name, ::getpid())) {
        fs::remove_all(p);
        fs::create_directories(p);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(p, ec);
    }
    std::vector<std::string> names() const {
        std::vector<std::string> v;
        for (const auto& e : fs::directory_iterator(p)) v.push_back(e.path().filename().string());
        std::sort(v.begin(), v.end());
        return v;
    }
};

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST(OutputSet, FilesAppearOnlyWhenTheWholeSetIsComplete) {
    TempDir d("outset");
    {
        OutputSet s;
        s.open((d.p / "a.txt").string()) << "alpha\n";
        s.add((d.p / "b.txt").string(), "beta\n");
        EXPECT_EQ(d.names(), (std::vector<std::string>{OutputSet::tempName("a.txt"), OutputSet::tempName("b.txt")}));
        s.commit();
    }
    EXPECT_EQ(d.names(), (std::vector<std::string>{"a.txt", "b.txt"}));
    EXPECT_EQ(slurp(d.p / "a.txt"), "alpha\n");
    EXPECT_EQ(slurp(d.p / "b.txt"), "beta\n");
}

TEST(OutputSet, AFailureLeavesNothingNotEvenTheFilesBeforeIt) {
    TempDir d("outset-fail");
    {
        OutputSet s;
        s.add((d.p / "one.csv").string(), "1\n");
        s.add((d.p / "two.csv").string(), "2\n");
        // The third cannot be created: its directory does not exist.
        try {
            s.add((d.p / "nodir" / "three.csv").string(), "3\n");
            ADD_FAILURE() << "a file in a missing directory was accepted";
        } catch (const InputError& e) {
            EXPECT_EQ(std::string(e.what()), (d.p / "nodir" / "three.csv").string() + ": cannot write (No such file or directory)");
        }
    }  // dropped without commit()
    EXPECT_TRUE(d.names().empty()) << "left: " << fmt::format("{}", fmt::join(d.names(), " "));
}

TEST(OutputSet, AFailedRenameSaysWhyAndRemovesTheTemporaries) {
    TempDir d("outset-rename");
    const fs::path target = d.p / "out.json";
    try {
        OutputSet s;
        s.add(target.string(), "{}\n");
        s.add((d.p / "later.json").string(), "[]\n");
        // Between the run's start and its end, a non-empty directory took the file's place.
        fs::create_directories(target / "inside");
        s.commit();
        ADD_FAILURE() << "renamed over a directory";
    } catch (const InputError& e) {
        const std::string w = e.what();
        EXPECT_EQ(w.find(target.string() + ": cannot rename the temporary file into place: "), 0u) << w;
        EXPECT_EQ(w.find("Success"), std::string::npos) << "the reason was overwritten: " << w;
    }
    EXPECT_EQ(d.names(), std::vector<std::string>{"out.json"}) << "only the directory that was in the way";
    EXPECT_TRUE(fs::is_directory(target));
}

// schedlab-cli stopped mid-run by SIGINT or SIGTERM: one line, exit 2, no file and no temporary.
TEST(InterruptCleanup, AStoppedRunLeavesNoTemporaries) {
    for (int sig : {SIGINT, SIGTERM}) {
        TempDir d(sig == SIGINT ? "int" : "term");
        const std::string scenario = (d.p / "long.json").string();
        std::ofstream(scenario) << R"({"topology":"i7-4790","workloads":[{"type":"tbench","pairs":1024,"runtime_s":0.001}]})";
        const fs::path out = d.p / "out";
        fs::create_directories(out);
        const std::string err = (d.p / "stderr.txt").string();
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            ::dup2(fd, 2);
            const int nul = ::open("/dev/null", O_WRONLY);
            ::dup2(nul, 1);
            const std::string dec = (out / "d.jsonl").string(), ft = (out / "f.txt").string(), dat = (out / "t.dat").string();
            ::execl(SCHEDLAB_CLI, SCHEDLAB_CLI, "run", scenario.c_str(), "--decisions", dec.c_str(), "--ftrace", ft.c_str(), "--trace-dat",
                    dat.c_str(), static_cast<char*>(nullptr));
            ::_exit(127);
        }
        // Wait until the run has its temporaries, then stop it.
        bool started = false;
        for (int i = 0; i < 500 && !started; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            started = fs::exists(out / fmt::format("f.txt.tmp.{}", pid));
        }
        EXPECT_TRUE(started);
        ::kill(pid, sig);
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        EXPECT_EQ(WEXITSTATUS(status), 2);
        EXPECT_EQ(slurp(err), fmt::format("schedlab-cli: interrupted by {}: nothing written\n", sig == SIGINT ? "SIGINT" : "SIGTERM"));
        std::vector<std::string> left;
        for (const auto& e : fs::directory_iterator(out)) left.push_back(e.path().filename().string());
        EXPECT_TRUE(left.empty()) << "left: " << fmt::format("{}", fmt::join(left, " "));
    }
}
