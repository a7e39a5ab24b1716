// SPDX-License-Identifier: GPL-2.0-or-later
// topology_json.cpp: topology references in JSON files and on the command line.
#include "topology/topology_json.h"

#include "topology/topology_hwloc.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

namespace sched {

std::string readFileOrThrow(const std::string& path, std::uintmax_t maxBytes, const char* what) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw InputError(path, "", "is a directory, not a file");
    // The JSON files schedlab reads are kilobytes; a parsed document takes several times its size.
    if (const auto size = std::filesystem::file_size(path, ec); !ec && size > maxBytes)
        throw InputError(path, "", fmt::format("{} MB: more than the {} MB {} may be", size >> 20, maxBytes >> 20, what));
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, "", "cannot open file");
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw InputError(path, "", "read error");
    return ss.str();
}

namespace {
struct TooDeep {};
struct DuplicateKey {
    std::string key;
};
}  // namespace

nlohmann::json parseJsonOrThrow(const std::string& text, const std::string& file) {
    try {
        // Bounded depth: nlohmann's copies are recursive, so a document nested 100 000 deep would
        // overflow the stack after it parsed (a crash, not an error).
        // A key given twice in one object: nlohmann keeps the last silently, so which one counts
        // would be a guess; refused. The keys of each open object, by depth.
        std::vector<std::set<std::string>> keys;
        return nlohmann::json::parse(text, [&keys](int depth, nlohmann::json::parse_event_t ev, nlohmann::json& v) {
            if (depth > kMaxJsonDepth) throw TooDeep{};
            using E = nlohmann::json::parse_event_t;
            if (ev == E::object_start) keys.emplace_back();
            else if (ev == E::object_end && !keys.empty()) keys.pop_back();
            else if (ev == E::key && !keys.empty()) {
                const std::string& name = v.get_ref<const std::string&>();
                if (!keys.back().insert(name).second) throw DuplicateKey{name};
            }
            return true;
        });
    } catch (const TooDeep&) {
        throw InputError(file, "", fmt::format("JSON nested more than {} levels deep", kMaxJsonDepth));
    } catch (const DuplicateKey& d) {
        throw InputError(file, d.key, "given twice in one object (which one counts would be a guess)");
    } catch (const nlohmann::json::out_of_range&) {
        throw InputError(file, "", "a JSON number too large for a double (such as 1e400)");
    } catch (const nlohmann::json::parse_error& e) {
        // Turn the byte offset into line:column.
        size_t line = 1, col = 1;
        for (size_t i = 0; i < e.byte && i < text.size(); ++i) {
            if (text[i] == '\n') {
                ++line;
                col = 1;
            } else {
                ++col;
            }
        }
        std::string what = e.what();
        auto p = what.find(": syntax error");
        std::string detail = p == std::string::npos ? what : what.substr(p + 2);
        throw InputError(file, "", fmt::format("JSON syntax error at line {}, column {}: {}", line, col, detail));
    }
}

namespace {

Topology fromFile(const std::string& path, const std::string& file, const std::string& key) {
    const std::string ext = std::filesystem::path(path).extension().string();
    if (ext == ".xml") {
        try {
            return topologyFromHwloc(path, std::filesystem::path(path).stem().string());
        } catch (const TopologyError& e) {
            // Its message starts with the XML's path: not twice when that is the file named.
            std::string msg = e.what();
            if (key.empty() && file == path && msg.rfind(path + ": ", 0) == 0) msg.erase(0, path.size() + 2);
            throw InputError(file, key, msg);
        }
    }
    std::string text;
    try {
        text = readFileOrThrow(path);
    } catch (const InputError& e) {
        throw InputError(file, key, fmt::format("cannot open topology file '{}': {}", path, e.problem));
    }
    nlohmann::json j = parseJsonOrThrow(text, path);
    if (j.is_object() && j.contains("topology"))
        return topologyFromJson(j["topology"], path, "topology", std::filesystem::path(path).parent_path().string());
    return topologyFromJson(j, path, "", std::filesystem::path(path).parent_path().string());
}

std::string presetList() {
    std::string known;
    for (const auto& n : Topology::presetNames()) known += (known.empty() ? "" : ", ") + n;
    return known;
}

// "host" (the running machine, through hwloc), a preset name, or an existing file
// (relative to baseDir); nullopt when it is none of these. Errors name file and key.
std::optional<Topology> topologyByName(const std::string& s, const std::string& baseDir, const std::string& file, const std::string& key) {
    if (s == "host") {
        try {
            return topologyFromHwloc("", "host");
        } catch (const TopologyError& e) {
            throw InputError(file, key, e.what());
        }
    }
    const auto names = Topology::presetNames();
    if (std::find(names.begin(), names.end(), s) != names.end()) return Topology::preset(s);
    std::filesystem::path p(s);
    if (p.is_relative() && !baseDir.empty()) p = std::filesystem::path(baseDir) / p;
    std::error_code ec;  // a name the file system refuses (too long, ...) is no file: not an exception
    if (!std::filesystem::exists(p, ec) || ec) return std::nullopt;
    return fromFile(p.string(), file, key);
}

}  // namespace

Topology topologyFromJson(const nlohmann::json& v, const std::string& file, const std::string& key, const std::string& baseDir) {
    auto sub = [&](const std::string& k) { return key.empty() ? k : key + "." + k; };
    if (v.is_string()) {
        const std::string s = v.get<std::string>();
        if (auto t = topologyByName(s, baseDir, file, key)) return std::move(*t);
        throw InputError(file, key, fmt::format("'{}' is neither a topology preset ({}) nor a file", s, presetList()));
    }
    if (!v.is_object()) throw InputError(file, key, "must be a preset name, a file path or a parametric object");
    if (v.contains("preset")) {
        if (v.size() != 1) throw InputError(file, sub("preset"), "a preset takes no other keys");
        if (!v["preset"].is_string()) throw InputError(file, sub("preset"), "must be a string");
        try {
            return Topology::preset(v["preset"].get<std::string>());
        } catch (const TopologyError& e) {
            throw InputError(file, sub("preset"), e.what());
        }
    }
    TopologyParams p;
    static const std::set<std::string> known = {"name",
                                                "arch",
                                                "sockets",
                                                "llcs_per_socket",
                                                "cores_per_llc",
                                                "threads_per_core",
                                                "cores_per_cluster",
                                                "nodes_per_socket",
                                                "numbering",
                                                "remote_distance",
                                                "intra_socket_distance",
                                                "distances",
                                                "capacities",
                                                "node_reclaim_distance"};
    for (auto it = v.begin(); it != v.end(); ++it)
        if (!known.count(it.key())) throw InputError(file, sub(it.key()), "unknown key in a parametric topology");
    auto getInt = [&](const char* k, int& out) {
        if (!v.contains(k)) return;
        if (!v[k].is_number_integer()) throw InputError(file, sub(k), "must be an integer");
        out = v[k].get<int>();
    };
    if (v.contains("name")) {
        if (!v["name"].is_string()) throw InputError(file, sub("name"), "must be a string");
        p.name = v["name"].get<std::string>();
    }
    if (v.contains("arch")) {
        std::string a = v["arch"].is_string() ? v["arch"].get<std::string>() : "";
        if (a == "x86") p.arch = Arch::X86;
        else if (a == "power") p.arch = Arch::Power;
        else if (a == "arm64") p.arch = Arch::Arm64;
        else throw InputError(file, sub("arch"), "must be \"x86\", \"power\" or \"arm64\"");
    }
    getInt("sockets", p.sockets);
    getInt("llcs_per_socket", p.llcs_per_socket);
    getInt("cores_per_llc", p.cores_per_llc);
    getInt("threads_per_core", p.threads_per_core);
    getInt("cores_per_cluster", p.cores_per_cluster);
    getInt("nodes_per_socket", p.nodes_per_socket);
    getInt("remote_distance", p.remote_distance);
    getInt("intra_socket_distance", p.intra_socket_distance);
    getInt("node_reclaim_distance", p.node_reclaim_distance);
    if (v.contains("numbering")) {
        std::string n = v["numbering"].is_string() ? v["numbering"].get<std::string>() : "";
        if (n == "x86") p.numbering = Numbering::X86;
        else if (n == "adjacent") p.numbering = Numbering::Adjacent;
        else throw InputError(file, sub("numbering"), "must be \"x86\" or \"adjacent\"");
    }
    if (v.contains("distances")) {
        try {
            p.distances = v["distances"].get<std::vector<std::vector<int>>>();
        } catch (const nlohmann::json::exception&) {
            throw InputError(file, sub("distances"), "must be a square matrix of integers");
        }
    }
    if (v.contains("capacities")) {
        try {
            p.capacities = v["capacities"].get<std::vector<int>>();
        } catch (const nlohmann::json::exception&) {
            throw InputError(file, sub("capacities"), "must be a list of integers");
        }
    }
    try {
        return Topology::fromParams(p);
    } catch (const TopologyError& e) {
        std::string msg = e.what();
        auto colon = msg.find(": ");
        if (colon != std::string::npos && known.count(msg.substr(0, colon))) throw InputError(file, sub(msg.substr(0, colon)), msg.substr(colon + 2));
        throw InputError(file, key, msg);
    }
}

Topology loadTopology(const std::string& nameOrPath) {
    if (auto t = topologyByName(nameOrPath, "", nameOrPath, "")) return std::move(*t);
    throw InputError(nameOrPath, "", fmt::format("no such topology preset or file (presets: {})", presetList()));
}

}  // namespace sched
