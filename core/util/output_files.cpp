// SPDX-License-Identifier: GPL-2.0-or-later
// output_files.cpp: OutputSet (temporaries renamed into place when a whole set is complete) and
// the interrupt cleanup that removes the temporaries of a process stopped by a signal.
#include "util/output_files.h"

#include "util/input_error.h"

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <unistd.h>

namespace sched {

namespace {

// The registry the signal handler reads: fixed slots of strdup()ed paths, so that the handler
// only loads pointers and calls unlink()/rmdir()/write()/_exit() (async-signal-safe).
constexpr std::size_t kSlots = 512;
std::array<std::atomic<char*>, kSlots> g_temps{};
std::atomic<const char*> g_prog{"schedlab"};

void interrupted(int sig) {
    for (auto& s : g_temps)
        if (const char* p = s.load(std::memory_order_acquire)) ::unlink(p);
    for (auto& s : g_temps)  // directories, once the files in them are gone
        if (const char* p = s.load(std::memory_order_acquire)) ::rmdir(p);
    const char* name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP";
    const char* prog = g_prog.load();
    auto put = [](const char* s) { (void)!::write(2, s, std::strlen(s)); };
    put(prog);
    put(": interrupted by ");
    put(name);
    put(": nothing written\n");
    ::_exit(2);
}

}  // namespace

void registerTemporary(const std::string& path) {
    char* copy = ::strdup(path.c_str());
    if (!copy) return;
    for (auto& s : g_temps) {
        char* expected = nullptr;
        if (s.compare_exchange_strong(expected, copy, std::memory_order_acq_rel)) return;
    }
    std::free(copy);  // full: this one is not cleaned up on an interrupt (still on failure)
}

void unregisterTemporary(const std::string& path) {
    for (auto& s : g_temps) {
        char* p = s.load(std::memory_order_acquire);
        if (p && path == p && s.compare_exchange_strong(p, nullptr, std::memory_order_acq_rel)) {
            std::free(p);
            return;
        }
    }
}

void installInterruptCleanup(const char* prog) {
    g_prog.store(prog);
    struct sigaction sa {};
    sa.sa_handler = interrupted;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&sa.sa_mask, sig);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

struct OutputSet::File {
    std::string path, tmp;
    std::ofstream f;
    std::vector<char> buf;
    bool renamed = false;
};

std::string OutputSet::tempName(const std::string& path) { return path + fmt::format(".tmp.{}", ::getpid()); }

std::ostream& OutputSet::open(const std::string& path) {
    auto file = std::make_unique<File>();
    file->path = path;
    file->tmp = tempName(path);
    file->buf.resize(1 << 20);
    file->f.rdbuf()->pubsetbuf(file->buf.data(), std::streamsize(file->buf.size()));
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw InputError(path, "", "is a directory: give a file name");
    registerTemporary(file->tmp);
    file->f.open(file->tmp, std::ios::binary | std::ios::trunc);
    if (!file->f) {
        const int err = errno;
        unregisterTemporary(file->tmp);
        throw InputError(path, "", fmt::format("cannot write ({})", err ? std::strerror(err) : "directory missing or not writable"));
    }
    m_files.push_back(std::move(file));
    return m_files.back()->f;
}

void OutputSet::add(const std::string& path, const std::string& content) {
    std::ostream& o = open(path);
    o.write(content.data(), std::streamsize(content.size()));
    o.flush();
    if (!o) throw InputError(path, "", "write failed (disk full?)");
}

void OutputSet::commit() {
    for (auto& file : m_files) {
        file->f.flush();
        if (!file->f) throw InputError(file->path, "", "write failed (disk full?)");
        file->f.close();
        if (!file->f) throw InputError(file->path, "", "write failed (disk full?)");
    }
    for (auto& file : m_files) {
        std::error_code ec;
        std::filesystem::rename(file->tmp, file->path, ec);
        if (ec) throw InputError(file->path, "", "cannot rename the temporary file into place: " + ec.message());  // the dtor removes the rest
        file->renamed = true;
        unregisterTemporary(file->tmp);
    }
    m_committed = true;
}

OutputSet::OutputSet() = default;

OutputSet::~OutputSet() {
    for (auto& file : m_files) {
        if (file->renamed) continue;
        if (file->f.is_open()) file->f.close();
        std::error_code ec;
        std::filesystem::remove(file->tmp, ec);
        unregisterTemporary(file->tmp);
    }
}

void writeFileAtomic(const std::string& path, const std::string& content) {
    OutputSet s;
    s.add(path, content);
    s.commit();
}

}  // namespace sched
