// SPDX-License-Identifier: GPL-2.0-or-later
// output_files.h: every file schedlab writes goes through an OutputSet: each file is written
// under a temporary name beside its place (NAME.tmp.PID), and only when every file of the set is
// complete are they renamed into place. A set that fails, or is dropped before commit(), removes
// its temporaries; so does a SIGINT, SIGTERM or SIGHUP (installInterruptCleanup()), which then
// ends the process with one line and exit status 2. Nothing half-written stays behind.
#pragma once

#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace sched {

class OutputSet {
public:
    OutputSet();
    ~OutputSet();
    OutputSet(const OutputSet&) = delete;
    OutputSet& operator=(const OutputSet&) = delete;

    /// A stream for `path`, written to its temporary. Throws InputError when it cannot be created.
    std::ostream& open(const std::string& path);
    /// `content` written to `path`'s temporary now (a write error throws InputError).
    void add(const std::string& path, const std::string& content);
    /// Flushes and closes every file (a write error: InputError naming it, "disk full?"), then
    /// renames each into place. A rename that fails removes the temporaries not yet renamed and
    /// throws InputError with the system's reason.
    void commit();
    /// The temporary name a path is written under (PATH.tmp.PID).
    static std::string tempName(const std::string& path);

private:
    struct File;
    std::vector<std::unique_ptr<File>> m_files;
    bool m_committed = false;
};

/// Writes one file through an OutputSet.
void writeFileAtomic(const std::string& path, const std::string& content);

/// A temporary file or directory that the interrupt cleanup removes (files first, then the
/// directories, which must be empty by then). For writers that manage their own temporaries
/// (the trace.dat writer).
void registerTemporary(const std::string& path);
void unregisterTemporary(const std::string& path);

/// SIGINT, SIGTERM and SIGHUP: remove every registered temporary, print "PROG: interrupted by
/// SIGNAME: nothing written" and exit with status 2. Call once, early in main().
void installInterruptCleanup(const char* prog);

}  // namespace sched
