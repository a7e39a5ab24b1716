// SPDX-License-Identifier: GPL-2.0-or-later
// machine_info.h: which machine the figures were measured on: the CPU (CPUID), its
// microarchitecture, the kernel, whether it is a virtual machine and under which hypervisor.
#pragma once

#include <string>

namespace sched::calibrate {

/// The identity of the measuring machine.
struct MachineInfo {
    std::string vendor;  ///< CPUID vendor string, e.g. "AuthenticAMD"; from /proc/cpuinfo off x86
    int family = -1;     ///< display family (base + extended), -1 when unknown
    int model = -1;      ///< display model (base + extended << 4 for family 6 and >= 0xF)
    int stepping = -1;
    std::string modelName;          ///< CPUID brand string, trimmed
    std::string microarchitecture;  ///< e.g. "Zen 3 (Milan)"; "unknown" when not in the table
    std::string kernel;             ///< uname -r
    bool virtualized = false;       ///< CPUID's hypervisor bit, /sys/hypervisor, or cpuinfo's "hypervisor" flag
    std::string hypervisor;         ///< e.g. "KVM"; empty when not virtualized, "unknown" when it cannot tell
    std::string clocksource;        ///< current clocksource (tsc, kvm-clock, ...), empty when unreadable
    std::string cpuidleDriver;      ///< cpuidle driver (intel_idle, acpi_idle, haltpoll, none), empty when unreadable
    int onlineCpus = 0;
};

/// Reads everything above from this machine.
MachineInfo probeMachine();

/// The microarchitecture of a CPU by vendor, family, model and stepping: AMD families 0x17, 0x19 and
/// 0x1a, Intel family 6 from Nehalem on. "unknown" otherwise.
std::string microarchitecture(const std::string& vendor, int family, int model, int stepping);

/// A readable hypervisor name for a CPUID leaf 0x40000000 signature (12 characters), else the
/// signature itself (printable characters only).
std::string hypervisorName(const std::string& signature);

}  // namespace sched::calibrate
