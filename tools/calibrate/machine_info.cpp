// SPDX-License-Identifier: GPL-2.0-or-later
// machine_info.cpp: CPUID (vendor, family/model/stepping, brand string, hypervisor leaves), sysfs
// and /proc/cpuinfo, and the small microarchitecture table.
#include "machine_info.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <sys/utsname.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

namespace sched::calibrate {

namespace {

std::string trim(std::string s) {
    const auto b = s.find_first_not_of(" \t\n\r");
    if (b == std::string::npos) return "";
    const auto e = s.find_last_not_of(" \t\n\r");
    return s.substr(b, e - b + 1);
}

std::string firstLine(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    if (!in || !std::getline(in, line)) return "";
    return trim(line);
}

// The value of the first "key : value" line of /proc/cpuinfo with this key ("" when none).
std::string cpuinfoField(const std::string& key) {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon != std::string::npos && trim(line.substr(0, colon)) == key) return trim(line.substr(colon + 1));
    }
    return "";
}

bool cpuinfoHasFlag(const std::string& flag) {
    std::istringstream flags(cpuinfoField("flags"));
    std::string f;
    while (flags >> f) {
        if (f == flag) return true;
    }
    return false;
}

struct ModelRange {
    int first, last;
    const char* name;
};

const char* lookup(std::initializer_list<ModelRange> table, int model) {
    for (const ModelRange& r : table) {
        if (model >= r.first && model <= r.last) return r.name;
    }
    return nullptr;
}

#if defined(__x86_64__) || defined(__i386__)
std::string registersText(std::initializer_list<unsigned> regs) {
    std::string s;
    for (unsigned r : regs) s.append(reinterpret_cast<const char*>(&r), 4);
    return s;
}
#endif

}  // namespace

std::string microarchitecture(const std::string& vendor, int family, int model, int stepping) {
    const char* name = nullptr;
    if (vendor == "AuthenticAMD" || vendor == "HygonGenuine") {
        if (vendor == "HygonGenuine" && family == 0x18) return "Zen (Hygon Dhyana)";
        switch (family) {
        case 0x17:
            name = lookup({{0x01, 0x01, "Zen (Naples / Summit Ridge)"},
                           {0x08, 0x08, "Zen+ (Pinnacle Ridge / Colfax)"},
                           {0x11, 0x11, "Zen (Raven Ridge)"},
                           {0x18, 0x18, "Zen+ (Picasso)"},
                           {0x20, 0x20, "Zen (Dali)"},
                           {0x00, 0x2f, "Zen / Zen+"},
                           {0x31, 0x31, "Zen 2 (Rome / Castle Peak)"},
                           {0x47, 0x47, "Zen 2 (4700S)"},
                           {0x60, 0x60, "Zen 2 (Renoir)"},
                           {0x68, 0x68, "Zen 2 (Lucienne)"},
                           {0x71, 0x71, "Zen 2 (Matisse)"},
                           {0x90, 0x90, "Zen 2 (Van Gogh)"},
                           {0xa0, 0xa0, "Zen 2 (Mendocino)"},
                           {0x30, 0xaf, "Zen 2"}},
                          model);
            break;
        case 0x19:
            name = lookup({{0x08, 0x08, "Zen 3 (Chagall)"},
                           {0x00, 0x0f, "Zen 3 (Milan)"},
                           {0x18, 0x18, "Zen 4 (Storm Peak)"},
                           {0x10, 0x1f, "Zen 4 (Genoa)"},
                           {0x20, 0x2f, "Zen 3 (Vermeer)"},
                           {0x40, 0x4f, "Zen 3+ (Rembrandt)"},
                           {0x50, 0x5f, "Zen 3 (Cezanne)"},
                           {0x60, 0x6f, "Zen 4 (Raphael)"},
                           {0x70, 0x7f, "Zen 4 (Phoenix)"},
                           {0xa0, 0xaf, "Zen 4c (Bergamo / Siena)"}},
                          model);
            break;
        case 0x1a:
            name = lookup({{0x00, 0x0f, "Zen 5 (Turin)"},
                           {0x10, 0x1f, "Zen 5c (Turin Dense)"},
                           {0x20, 0x2f, "Zen 5 (Strix Point)"},
                           {0x40, 0x4f, "Zen 5 (Granite Ridge)"},
                           {0x60, 0x6f, "Zen 5 (Krackan Point)"},
                           {0x70, 0x7f, "Zen 5 (Strix Halo)"}},
                          model);
            break;
        default: break;
        }
    } else if (vendor == "GenuineIntel" && family == 6) {
        if (model == 0x55) {
            if (stepping >= 0xa) return "Cooper Lake";
            if (stepping >= 5) return "Cascade Lake";
            return "Skylake-SP";
        }
        name = lookup({{0x1a, 0x1a, "Nehalem"},
                       {0x1e, 0x1f, "Nehalem"},
                       {0x2e, 0x2e, "Nehalem-EX"},
                       {0x25, 0x25, "Westmere"},
                       {0x2c, 0x2c, "Westmere-EP"},
                       {0x2f, 0x2f, "Westmere-EX"},
                       {0x2a, 0x2a, "Sandy Bridge"},
                       {0x2d, 0x2d, "Sandy Bridge-EP"},
                       {0x3a, 0x3a, "Ivy Bridge"},
                       {0x3e, 0x3e, "Ivy Bridge-EP"},
                       {0x3c, 0x3c, "Haswell"},
                       {0x45, 0x46, "Haswell"},
                       {0x3f, 0x3f, "Haswell-EP"},
                       {0x3d, 0x3d, "Broadwell"},
                       {0x47, 0x47, "Broadwell"},
                       {0x4f, 0x4f, "Broadwell-EP"},
                       {0x56, 0x56, "Broadwell-DE"},
                       {0x4e, 0x4e, "Skylake"},
                       {0x5e, 0x5e, "Skylake"},
                       {0x8e, 0x8e, "Kaby Lake / Coffee Lake / Whiskey Lake"},
                       {0x9e, 0x9e, "Kaby Lake / Coffee Lake"},
                       {0xa5, 0xa6, "Comet Lake"},
                       {0x66, 0x66, "Cannon Lake"},
                       {0x7d, 0x7e, "Ice Lake"},
                       {0x6a, 0x6a, "Ice Lake-SP"},
                       {0x6c, 0x6c, "Ice Lake-D"},
                       {0x8c, 0x8d, "Tiger Lake"},
                       {0xa7, 0xa7, "Rocket Lake"},
                       {0x97, 0x97, "Alder Lake"},
                       {0x9a, 0x9a, "Alder Lake"},
                       {0xb7, 0xb7, "Raptor Lake"},
                       {0xba, 0xba, "Raptor Lake"},
                       {0xbf, 0xbf, "Raptor Lake"},
                       {0xaa, 0xac, "Meteor Lake"},
                       {0xbd, 0xbd, "Lunar Lake"},
                       {0xc5, 0xc6, "Arrow Lake"},
                       {0x8f, 0x8f, "Sapphire Rapids"},
                       {0xcf, 0xcf, "Emerald Rapids"},
                       {0xad, 0xae, "Granite Rapids"},
                       {0xaf, 0xaf, "Sierra Forest"},
                       {0xdd, 0xdd, "Clearwater Forest"},
                       {0x5c, 0x5c, "Goldmont"},
                       {0x5f, 0x5f, "Goldmont"},
                       {0x7a, 0x7a, "Goldmont Plus"},
                       {0x86, 0x86, "Tremont"},
                       {0x96, 0x96, "Tremont"},
                       {0x9c, 0x9c, "Tremont"},
                       {0x57, 0x57, "Knights Landing"},
                       {0x85, 0x85, "Knights Mill"}},
                      model);
    }
    return name ? name : "unknown";
}

std::string hypervisorName(const std::string& signature) {
    static const std::pair<const char*, const char*> kKnown[] = {
        {"KVMKVMKVM", "KVM"},           {"Linux KVM Hv", "KVM (Hyper-V enlightenments)"},
        {"Microsoft Hv", "Hyper-V"},    {"VMwareVMware", "VMware"},
        {"XenVMMXenVMM", "Xen"},        {"TCGTCGTCGTCG", "QEMU TCG"},
        {" lrpepyh  vr", "Parallels"},  {"bhyve bhyve ", "bhyve"},
        {"ACRNACRNACRN", "ACRN"},       {"QNXQVMBSQG", "QNX hypervisor"},
        {"VBoxVBoxVBox", "VirtualBox"}, {"SRESRESRESRE", "Intel TDX"},
    };
    std::string sig = signature.substr(0, signature.find('\0'));
    for (const auto& [s, name] : kKnown) {
        if (sig == s) return name;
    }
    std::string printable;
    for (char ch : sig) {
        if (ch >= 0x20 && ch < 0x7f) printable += ch;
    }
    return printable.empty() ? "unknown" : printable;
}

MachineInfo probeMachine() {
    MachineInfo m;
#if defined(__x86_64__) || defined(__i386__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid(0, &a, &b, &c, &d)) m.vendor = registersText({b, d, c});
    if (__get_cpuid(1, &a, &b, &c, &d)) {
        const int baseFamily = int((a >> 8) & 0xf), baseModel = int((a >> 4) & 0xf);
        m.family = baseFamily == 0xf ? baseFamily + int((a >> 20) & 0xff) : baseFamily;
        m.model = (baseFamily == 0x6 || baseFamily == 0xf) ? baseModel + (int((a >> 16) & 0xf) << 4) : baseModel;
        m.stepping = int(a & 0xf);
        m.virtualized = (c >> 31) & 1;
    }
    if (__get_cpuid(0x80000000, &a, &b, &c, &d) && a >= 0x80000004) {
        std::string brand;
        for (unsigned leaf = 0x80000002; leaf <= 0x80000004; ++leaf) {
            __get_cpuid(leaf, &a, &b, &c, &d);
            brand += registersText({a, b, c, d});
        }
        m.modelName = trim(brand.substr(0, brand.find('\0')));
    }
    if (m.virtualized) {
        // The hypervisor leaves are outside __get_cpuid's range check: __cpuid directly.
        __cpuid(0x40000000, a, b, c, d);
        m.hypervisor = hypervisorName(registersText({b, c, d}));
        if (m.hypervisor == "Hyper-V" && a >= 0x40000100) {
            __cpuid(0x40000100, a, b, c, d);  // KVM with Hyper-V enlightenments puts its own signature here
            if (hypervisorName(registersText({b, c, d})) == "KVM") m.hypervisor = "KVM (Hyper-V enlightenments)";
        }
    }
#endif
    if (m.vendor.empty()) m.vendor = cpuinfoField("vendor_id");
    if (m.vendor.empty()) m.vendor = cpuinfoField("CPU implementer");
    if (m.modelName.empty()) m.modelName = cpuinfoField("model name");
    if (!m.virtualized) {
        if (const std::string type = firstLine("/sys/hypervisor/type"); !type.empty()) {
            m.virtualized = true;
            m.hypervisor = type;
        } else if (cpuinfoHasFlag("hypervisor")) {
            m.virtualized = true;
        }
    }
    if (m.virtualized && m.hypervisor.empty()) m.hypervisor = "unknown";
    m.microarchitecture = microarchitecture(m.vendor, m.family, m.model, m.stepping);
    utsname u;
    if (uname(&u) == 0) m.kernel = u.release;
    m.clocksource = firstLine("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    m.cpuidleDriver = firstLine("/sys/devices/system/cpu/cpuidle/current_driver");
    m.onlineCpus = int(sysconf(_SC_NPROCESSORS_ONLN));
    return m;
}

}  // namespace sched::calibrate
