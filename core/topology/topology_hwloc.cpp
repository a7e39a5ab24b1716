// SPDX-License-Identifier: GPL-2.0-or-later
// topology_hwloc.cpp: Topology from hwloc (lstopo XML or the running machine).
#include "topology/topology_hwloc.h"

#include "util/install_paths.h"

#include <hwloc.h>
#include <hwloc/distances.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <new>
#include <sstream>
#include <string_view>
#include <system_error>
#include <tuple>
#include <vector>

namespace sched {
namespace {

/// Owns an hwloc topology.
class HwlocTopology {
public:
    HwlocTopology() {
        if (hwloc_topology_init(&m_t) != 0) throw std::bad_alloc();
    }
    ~HwlocTopology() { hwloc_topology_destroy(m_t); }
    HwlocTopology(const HwlocTopology&) = delete;
    HwlocTopology& operator=(const HwlocTopology&) = delete;
    hwloc_topology_t get() const { return m_t; }

private:
    hwloc_topology_t m_t = nullptr;
};

/// Owns the distance matrices returned by hwloc_distances_get_by_type().
class HwlocDistances {
public:
    HwlocDistances(hwloc_topology_t t, unsigned long kind) : m_t(t) {
        unsigned nr = 0;
        if (hwloc_distances_get_by_type(t, HWLOC_OBJ_NUMANODE, &nr, nullptr, kind, 0) != 0 || nr == 0) return;
        m_d.assign(nr, nullptr);
        if (hwloc_distances_get_by_type(t, HWLOC_OBJ_NUMANODE, &nr, m_d.data(), kind, 0) != 0) nr = 0;
        m_d.resize(std::min<std::size_t>(nr, m_d.size()));
    }
    ~HwlocDistances() {
        for (auto* d : m_d)
            if (d) hwloc_distances_release(m_t, d);
    }
    HwlocDistances(const HwlocDistances&) = delete;
    HwlocDistances& operator=(const HwlocDistances&) = delete;
    const std::vector<hwloc_distances_s*>& all() const { return m_d; }

private:
    hwloc_topology_t m_t;
    std::vector<hwloc_distances_s*> m_d;
};

/// Owns an hwloc bitmap.
class HwlocBitmap {
public:
    HwlocBitmap() : m_b(hwloc_bitmap_alloc()) {
        if (!m_b) throw std::bad_alloc();
    }
    ~HwlocBitmap() { hwloc_bitmap_free(m_b); }
    HwlocBitmap(const HwlocBitmap&) = delete;
    HwlocBitmap& operator=(const HwlocBitmap&) = delete;
    hwloc_bitmap_t get() const { return m_b; }

private:
    hwloc_bitmap_t m_b;
};

std::string errnoText(int e) {
    if (e == 0) return "no error code";
    return std::generic_category().message(e);
}

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

/// "0-5,8-31" for PUs sorted by os_index.
std::string cpuList(const std::vector<hwloc_obj_t>& pus) {
    std::string out;
    for (std::size_t i = 0; i < pus.size();) {
        std::size_t j = i;
        while (j + 1 < pus.size() && pus[j + 1]->os_index == pus[j]->os_index + 1) ++j;
        if (!out.empty()) out += ',';
        out += std::to_string(pus[i]->os_index);
        if (j > i) out += '-' + std::to_string(pus[j]->os_index);
        i = j + 1;
    }
    return out;
}

/// Cheap checks before handing the file to hwloc, for clearer messages.
void checkFile(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto st = fs::status(path, ec);
    if (ec || !fs::exists(st)) throw TopologyError(fmt::format("{}: cannot open ({})", path, errnoText(ec ? ec.value() : ENOENT)));
    if (!fs::is_regular_file(st)) throw TopologyError(fmt::format("{}: not a regular file", path));
    std::ifstream in(path, std::ios::binary);
    if (!in) throw TopologyError(fmt::format("{}: cannot open for reading", path));
    char buf[256];
    in.read(buf, sizeof buf);
    std::string_view head(buf, std::size_t(in.gcount()));
    if (startsWith(head, "\xEF\xBB\xBF")) head.remove_prefix(3);  // UTF-8 BOM
    while (!head.empty() && (head.front() == ' ' || head.front() == '\t' || head.front() == '\r' || head.front() == '\n')) head.remove_prefix(1);
    if (head.empty()) throw TopologyError(fmt::format("{}: not an hwloc XML topology (empty file)", path));
    if (head.front() != '<') throw TopologyError(fmt::format("{}: not an hwloc XML topology (not XML)", path));
}

Arch archOf(hwloc_topology_t t) {
    const char* a = hwloc_obj_get_info_by_name(hwloc_get_root_obj(t), "Architecture");
    if (!a) return Arch::X86;
    std::string_view s(a);
    if (startsWith(s, "ppc")) return Arch::Power;
    if (startsWith(s, "aarch64") || startsWith(s, "arm64")) return Arch::Arm64;
    return Arch::X86;
}

bool included(hwloc_const_cpuset_t sub, hwloc_const_cpuset_t super) { return hwloc_bitmap_isincluded(sub, super) != 0; }
/// `sub` is strictly inside `super`.
bool strictlyInside(hwloc_const_cpuset_t sub, hwloc_const_cpuset_t super) { return included(sub, super) && !hwloc_bitmap_isequal(sub, super); }

hwloc_obj_t ancestor(hwloc_topology_t t, hwloc_obj_type_t type, hwloc_obj_t pu) { return hwloc_get_ancestor_obj_by_type(t, type, pu); }

/// The "Cluster" Group (Linux cluster_cpus, hwloc >= 2.8) above `pu`, if any.
hwloc_obj_t clusterGroup(hwloc_obj_t pu) {
    for (hwloc_obj_t o = pu->parent; o; o = o->parent)
        if (o->type == HWLOC_OBJ_GROUP && o->subtype && std::strcmp(o->subtype, "Cluster") == 0) return o;
    return nullptr;
}

/// The NUMA node whose cpuset holds `cpu`. Several match when CPU-less memory
/// nodes (HBM, NVM, CXL) share the locality of a normal one: prefer nodes
/// without a subtype, then the smallest cpuset, then the lowest os_index.
hwloc_obj_t nodeOf(const std::vector<hwloc_obj_t>& nodes, unsigned cpu) {
    hwloc_obj_t best = nullptr;
    auto rank = [](hwloc_obj_t n) {
        const bool special = n->subtype && *n->subtype;
        return std::make_tuple(special, hwloc_bitmap_weight(n->cpuset), n->os_index);
    };
    for (hwloc_obj_t n : nodes) {
        if (!n->cpuset || !hwloc_bitmap_isset(n->cpuset, cpu)) continue;
        if (!best || rank(n) < rank(best)) best = n;
    }
    return best;
}

/// Dense ids in order of first appearance.
class Renumber {
public:
    int operator()(const void* key) {
        auto [it, fresh] = m_ids.emplace(key, int(m_ids.size()));
        return it->second;
    }
    std::size_t size() const { return m_ids.size(); }

private:
    std::map<const void*, int> m_ids;
};

/// Node x node matrix for `nodes` (dense order) from hwloc's latency matrix,
/// empty when hwloc has none that covers them all.
std::vector<std::vector<int>> distancesOf(hwloc_topology_t t, const std::vector<hwloc_obj_t>& nodes, const std::string& where) {
    HwlocDistances all(t, HWLOC_DISTANCES_KIND_MEANS_LATENCY);
    const hwloc_distances_s* best = nullptr;
    for (const auto* d : all.all())  // prefer the OS's (SLIT) matrix to user-provided ones
        if (!best || ((d->kind & HWLOC_DISTANCES_KIND_FROM_OS) && !(best->kind & HWLOC_DISTANCES_KIND_FROM_OS))) best = d;
    if (!best || !best->objs || !best->values) return {};

    std::vector<unsigned> index;
    for (hwloc_obj_t n : nodes) {
        unsigned i = 0;
        while (i < best->nbobjs && best->objs[i] != n) ++i;
        if (i == best->nbobjs) return {};  // a node the matrix does not cover
        index.push_back(i);
    }
    std::vector<std::vector<int>> m(nodes.size(), std::vector<int>(nodes.size()));
    for (std::size_t a = 0; a < nodes.size(); ++a)
        for (std::size_t b = 0; b < nodes.size(); ++b) {
            const hwloc_uint64_t v = best->values[std::size_t(index[a]) * best->nbobjs + index[b]];
            if (v > hwloc_uint64_t(INT_MAX))
                throw TopologyError(
                    fmt::format("{}: NUMA distance {} between nodes {} and {} is out of range", where, v, nodes[a]->os_index, nodes[b]->os_index));
            m[a][b] = int(v);
        }
    return m;
}

/// Capacities from hwloc's CPU kinds, indexed by CPU; empty = all 1024.
/// x86 keeps 1024 everywhere: Linux 6.1 x86 has no asymmetric capacities
/// (hybrid parts use ITMT priorities instead).
std::vector<int> capacitiesOf(hwloc_topology_t t, Arch arch, int nrCpus) {
    if (arch == Arch::X86) return {};
    const int nr = hwloc_cpukinds_get_nr(t, 0);
    if (nr < 2) return {};
    HwlocBitmap set;
    struct Kind {
        int efficiency;
        std::vector<unsigned> cpus;
    };
    std::vector<Kind> kinds;
    int maxEff = -1;
    for (int k = 0; k < nr; ++k) {
        int eff = -1;
        if (hwloc_cpukinds_get_info(t, unsigned(k), set.get(), &eff, nullptr, nullptr, 0) != 0 || eff < 0) return {};
        Kind kind{eff, {}};
        unsigned cpu;
        hwloc_bitmap_foreach_begin(cpu, set.get()) { kind.cpus.push_back(cpu); }
        hwloc_bitmap_foreach_end();
        maxEff = std::max(maxEff, eff);
        kinds.push_back(std::move(kind));
    }
    std::vector<int> cap(std::size_t(nrCpus), 1024);
    for (const auto& k : kinds)
        if (k.efficiency < maxEff)
            for (unsigned cpu : k.cpus)
                if (cpu < unsigned(nrCpus)) cap[cpu] = 512;
    return cap;
}

/// What the hwloc walk produces (the Topology is built from it afterwards).
struct Extracted {
    Arch arch = Arch::X86;
    std::vector<CpuInfo> cpus;
    std::vector<std::vector<int>> distances;
};

/// Loads `t` (already initialised and configured) from `xmlPath` or the running
/// machine and reads the per-CPU records out of it. Throws TopologyError.
Extracted extract(hwloc_topology_t t, const std::string& xmlPath, const std::string& where) {
    if (!xmlPath.empty()) {
        errno = 0;
        if (hwloc_topology_set_xml(t, xmlPath.c_str()) != 0) {
            const int e = errno;
            if (e == ENOENT || e == EACCES || e == EISDIR) throw TopologyError(fmt::format("{}: cannot open ({})", where, errnoText(e)));
            throw TopologyError(
                fmt::format("{}: not an hwloc XML topology ({})", where,
                            e == EINVAL || e == 0 ? std::string("malformed or truncated XML") : "hwloc cannot parse it: " + errnoText(e)));
        }
    }
    errno = 0;
    if (hwloc_topology_load(t) != 0) {
        const int e = errno;
        if (xmlPath.empty()) throw TopologyError(fmt::format("{}: cannot discover this machine's topology ({})", where, errnoText(e)));
        throw TopologyError(
            fmt::format("{}: not an hwloc XML topology ({})", where,
                        e == EINVAL || e == 0 ? std::string("hwloc rejected its content") : "hwloc rejected its content: " + errnoText(e)));
    }

    // PUs by ascending CPU number.
    std::vector<hwloc_obj_t> pus;
    for (hwloc_obj_t pu = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_PU, nullptr); pu; pu = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_PU, pu))
        pus.push_back(pu);
    if (pus.empty()) throw TopologyError(fmt::format("{}: the topology has no PU (CPU)", where));
    if (pus.size() > std::size_t(kMaxCpus)) throw TopologyError(fmt::format("{}: {} CPUs; schedlab models at most {}", where, pus.size(), kMaxCpus));
    for (hwloc_obj_t pu : pus)
        if (pu->os_index == HWLOC_UNKNOWN_INDEX || !pu->cpuset) throw TopologyError(fmt::format("{}: a PU has no OS index (CPU number)", where));
    std::sort(pus.begin(), pus.end(), [](hwloc_obj_t a, hwloc_obj_t b) { return a->os_index < b->os_index; });
    for (std::size_t i = 0; i < pus.size(); ++i) {
        if (i > 0 && pus[i]->os_index == pus[i - 1]->os_index)
            throw TopologyError(fmt::format("{}: two PUs have OS index {}", where, pus[i]->os_index));
        if (pus[i]->os_index != i)
            throw TopologyError(
                fmt::format("{}: CPU numbers are not contiguous: CPU {} is missing (offline CPUs?); "
                            "CPUs present: {}",
                            where, i, cpuList(pus)));
    }

    std::vector<hwloc_obj_t> allNodes;
    for (hwloc_obj_t n = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, nullptr); n; n = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, n))
        allNodes.push_back(n);

    // Every object hwloc gives a PU has a cpuset; check anyway before using them.
    auto cpusetOf = [&](hwloc_obj_t o) {
        if (!o->cpuset) throw TopologyError(fmt::format("{}: a {} object has no cpuset", where, hwloc_obj_type_string(o->type)));
        return o->cpuset;
    };

    Extracted out;
    const hwloc_obj_t root = hwloc_get_root_obj(t);
    Renumber cores, clusters, llcs, dies, packages, nodes;
    std::vector<hwloc_obj_t> nodeObjs;  // by dense node id
    std::map<int, int> threadsOfCore;
    for (hwloc_obj_t pu : pus) {
        hwloc_obj_t core = ancestor(t, HWLOC_OBJ_CORE, pu);
        if (!core) core = pu;
        hwloc_obj_t package = ancestor(t, HWLOC_OBJ_PACKAGE, pu);
        if (!package) package = root;
        cpusetOf(core);
        cpusetOf(package);

        hwloc_obj_t llc = ancestor(t, HWLOC_OBJ_L3CACHE, pu);
        if (!llc || !included(cpusetOf(llc), package->cpuset)) llc = ancestor(t, HWLOC_OBJ_L2CACHE, pu);
        if (!llc || !included(cpusetOf(llc), package->cpuset)) llc = package;
        if (!included(core->cpuset, llc->cpuset)) llc = package;

        hwloc_obj_t die = ancestor(t, HWLOC_OBJ_DIE, pu);
        if (!die || !included(llc->cpuset, cpusetOf(die)) || !included(die->cpuset, package->cpuset)) die = package;

        hwloc_obj_t cluster = core;
        for (hwloc_obj_t cand : {clusterGroup(pu), ancestor(t, HWLOC_OBJ_L2CACHE, pu)}) {
            if (cand && strictlyInside(core->cpuset, cpusetOf(cand)) && included(cand->cpuset, llc->cpuset)) {
                cluster = cand;
                break;
            }
        }

        hwloc_obj_t node = nodeOf(allNodes, pu->os_index);
        CpuInfo c;
        c.cpu = int(pu->os_index);
        c.core = cores(core);
        c.thread = threadsOfCore[c.core]++;
        c.cluster = clusters(cluster);
        c.llc = llcs(llc);
        c.die = dies(die);
        c.package = packages(package);
        const std::size_t before = nodes.size();
        c.node = nodes(node);  // node == nullptr (no NUMA node at all): one node
        if (nodes.size() != before) nodeObjs.push_back(node);
        out.cpus.push_back(c);
    }

    out.arch = archOf(t);
    const auto cap = capacitiesOf(t, out.arch, int(out.cpus.size()));
    if (!cap.empty())
        for (auto& c : out.cpus) c.capacity = cap[std::size_t(c.cpu)];

    if (std::none_of(nodeObjs.begin(), nodeObjs.end(), [](hwloc_obj_t n) { return n == nullptr; })) out.distances = distancesOf(t, nodeObjs, where);
    if (out.distances.empty()) {
        const std::size_t n = nodeObjs.size();
        out.distances.assign(n, std::vector<int>(n, 20));
        for (std::size_t i = 0; i < n; ++i) out.distances[i][i] = 10;
    }
    return out;
}

// --- Running hwloc in a child process ---------------------------------------
// hwloc 2.9 dereferences NULL on some well-formed but inconsistent XML (e.g. a
// PU without complete_cpuset) and its built-in parser on some malformed XML, so
// the load and walk run in a forked child that sends back the result as text:
//   "OK" / arch / nrCpus / one line of 9 ints per CPU / nrNodes / matrix rows
//   "ERR" / message

std::string serialize(const Extracted& e) {
    std::string s = fmt::format("OK\n{}\n{}\n", int(e.arch), e.cpus.size());
    for (const auto& c : e.cpus)
        s += fmt::format("{} {} {} {} {} {} {} {} {}\n", c.cpu, c.thread, c.core, c.cluster, c.llc, c.die, c.package, c.node, c.capacity);
    s += fmt::format("{}\n", e.distances.size());
    for (const auto& row : e.distances) s += fmt::format("{}\n", fmt::join(row, " "));
    return s;
}

Extracted deserialize(const std::string& text, const std::string& where) {
    std::istringstream in(text);
    auto fail = [&]() -> TopologyError { return TopologyError(fmt::format("{}: garbled reply from the hwloc child process", where)); };
    std::string tag;
    if (!(in >> tag)) throw fail();
    if (tag == "ERR") {
        std::string msg;
        std::getline(in, msg);  // rest of the tag line
        msg.assign(std::istreambuf_iterator<char>(in), {});
        throw TopologyError(msg.empty() ? where + ": hwloc failed" : msg);
    }
    if (tag != "OK") throw fail();
    Extracted e;
    int arch = 0;
    std::size_t n = 0, nodes = 0;
    if (!(in >> arch >> n) || arch < 0 || arch > int(Arch::Arm64) || n > std::size_t(kMaxCpus)) throw fail();
    e.arch = Arch(arch);
    e.cpus.resize(n);
    for (auto& c : e.cpus)
        if (!(in >> c.cpu >> c.thread >> c.core >> c.cluster >> c.llc >> c.die >> c.package >> c.node >> c.capacity)) throw fail();
    if (!(in >> nodes) || nodes > std::size_t(kMaxCpus)) throw fail();
    e.distances.assign(nodes, std::vector<int>(nodes));
    for (auto& row : e.distances)
        for (auto& v : row)
            if (!(in >> v)) throw fail();
    return e;
}

void writeAll(int fd, const std::string& s) {
    std::size_t off = 0;
    while (off < s.size()) {
        const ssize_t w = ::write(fd, s.data() + off, s.size() - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        off += std::size_t(w);
    }
}

std::string readAll(int fd) {
    std::string s;
    char buf[4096];
    for (;;) {
        const ssize_t r = ::read(fd, buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return s;
        s.append(buf, std::size_t(r));
    }
}

/// The reply of the child `pid` that extracted (a forked one or schedlab-hwloc-reader), once
/// it has ended: its records, or the one-line error.
Extracted finishChild(pid_t pid, const std::string& reply, const std::string& xmlPath, const std::string& where) {
    int status = 0;
    bool reaped = true;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno == EINTR) continue;
        reaped = false;  // ECHILD: someone else's SIGCHLD handler reaped it; trust a complete reply
        break;
    }
    if (!reaped && reply.empty()) throw TopologyError(fmt::format("{}: lost the hwloc child process", where));
    if (reaped && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
        // A signal, or a sanitizer's exit code after catching the crash.
        const std::string how = WIFSIGNALED(status) ? fmt::format("signal {}", WTERMSIG(status))
                                : WIFEXITED(status) ? fmt::format("exit status {}", WEXITSTATUS(status))
                                                    : std::string("abnormal end");
        if (xmlPath.empty()) throw TopologyError(fmt::format("{}: hwloc crashed while discovering this machine ({})", where, how));
        throw TopologyError(fmt::format("{}: not an hwloc XML topology (hwloc crashed on it: {})", where, how));
    }
    return deserialize(reply, where);
}

/// extract() in a forked child process; in-process when fork() is not possible.
Extracted forkExtract(hwloc_topology_t t, const std::string& xmlPath, const std::string& where) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return extract(t, xmlPath, where);
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        return extract(t, xmlPath, where);
    }
    if (pid == 0) {
        // Child: hwloc's (and libxml2's) complaints would only clutter the
        // parent's stderr; the outcome travels through the pipe. _exit skips
        // the parent's atexit handlers and static destructors.
        ::close(fds[0]);
        const int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (devnull >= 0) ::dup2(devnull, STDERR_FILENO);
        std::string reply;
        try {
            reply = serialize(extract(t, xmlPath, where));
        } catch (const std::exception& e) {
            reply = std::string("ERR\n") + e.what();
        } catch (...) {
            reply = "ERR\n" + where + ": unknown error";
        }
        writeAll(fds[1], reply);
        ::_exit(0);
    }
    ::close(fds[1]);
    const std::string reply = readAll(fds[0]);
    ::close(fds[0]);
    return finishChild(pid, reply, xmlPath, where);
}

/// The hwloc work in `schedlab-hwloc-reader` (posix_spawn: no fork() of a process with threads,
/// the window's, whose other threads' locks would come along); its records on a pipe, its stderr
/// (hwloc's and libxml2's complaints) to /dev/null. `started` false: it could not be started.
Extracted spawnExtract(const std::string& reader, const std::string& xmlPath, const std::string& where, bool& started) {
    started = false;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return {};
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        return {};
    }
    int rc = posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    if (rc == 0) rc = posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    std::vector<char*> argv = {const_cast<char*>(reader.c_str()), const_cast<char*>(xmlPath.empty() ? "-" : xmlPath.c_str()),
                               const_cast<char*>(where.c_str()), nullptr};
    pid_t pid = -1;
    if (rc == 0) rc = posix_spawn(&pid, reader.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    if (rc != 0) {
        ::close(fds[0]);
        return {};
    }
    started = true;
    const std::string reply = readAll(fds[0]);
    ::close(fds[0]);
    return finishChild(pid, reply, xmlPath, where);
}

/// A fresh hwloc topology object set up as schedlab reads machines: every online CPU, whatever
/// our own cgroup allows; no I/O objects.
void setUp(hwloc_topology_t t) {
    hwloc_topology_set_flags(t, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_NONE);
}
}  // namespace

Topology topologyFromHwloc(const std::string& xmlPath, const std::string& name) {
    const std::string where = xmlPath.empty() ? std::string("hwloc") : xmlPath;
    if (!xmlPath.empty()) checkFile(xmlPath);

    Extracted e;
    bool started = false;
    if (const std::string reader = hwlocReaderPath(); !reader.empty()) e = spawnExtract(reader, xmlPath, where, started);
    if (!started) {
        // No schedlab-hwloc-reader to be found (or it cannot start): a forked child. Initialised
        // here, before the fork, so the child does not dlopen hwloc's plugins.
        HwlocTopology topo;
        hwloc_topology_t t = topo.get();
        setUp(t);
        e = forkExtract(t, xmlPath, where);
    }

    try {
        return Topology(name, e.arch, std::move(e.cpus), std::move(e.distances));
    } catch (const TopologyError& err) {
        throw TopologyError(fmt::format("{}: {}", where, err.what()));
    }
}

Topology topologyFromHwlocInProcess(const std::string& xmlPath, const std::string& name) {
    const std::string where = xmlPath.empty() ? std::string("hwloc") : xmlPath;
    if (!xmlPath.empty()) checkFile(xmlPath);
    HwlocTopology topo;
    setUp(topo.get());
    // Through the reply's text, as the records come from the child process.
    Extracted e = deserialize(serialize(extract(topo.get(), xmlPath, where)), where);
    try {
        return Topology(name, e.arch, std::move(e.cpus), std::move(e.distances));
    } catch (const TopologyError& err) {
        throw TopologyError(fmt::format("{}: {}", where, err.what()));
    }
}

int hwlocReaderMain(int argc, char** argv) {
    // As topologyFromHwloc() starts it: XML ("-": this machine) and the name for messages; the
    // records (or "ERR" and the message) on stdout.
    if (argc != 3) {
        std::fprintf(stderr, "schedlab-hwloc-reader: schedlab starts it to read a machine's topology; it is not run by hand\n");
        return 2;
    }
    const std::string xmlPath = std::strcmp(argv[1], "-") == 0 ? std::string() : std::string(argv[1]);
    std::string reply;
    try {
        HwlocTopology topo;
        setUp(topo.get());
        reply = serialize(extract(topo.get(), xmlPath, argv[2]));
    } catch (const std::exception& e) {
        reply = std::string("ERR\n") + e.what();
    } catch (...) {
        reply = std::string("ERR\n") + argv[2] + ": unknown error";
    }
    writeAll(STDOUT_FILENO, reply);
    return 0;
}

}  // namespace sched
