// SPDX-License-Identifier: GPL-2.0-or-later
// decision_flow.h: the wakeup path as a graph (docs/decision-flow.md): its entry points,
// functions and branches as nodes in the kernel's control-flow order, every reason code
// (decision.h) an exit node under the function that returns it, and the edges a decision
// takes. The window's flow view draws it, `run --flow` / `compare --flow` print it; both count
// decisions per edge with FlowCounts.
//
// The reason codes' nodes are made from the enums (every value toString() names), each under
// the function flowParent() gives it: a code added to decision.h appears in the graph, under
// its stage's function until flowParent() places it better.
#pragma once

#include "kernel/decision.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sched {

class StateArchive;

enum class FlowKind : std::uint8_t {
    Entry,     ///< where a placement starts: try_to_wake_up(), wake_up_new_task(), sched_exec()
    Function,  ///< a function or a branch of one that decides nothing itself
    Exit,      ///< a reason code: where the path ends or hands over (stage 0, 1, idlest, 2)
    Variant,   ///< a patch variant's mark on the decision (idle delay, claim)
};

struct FlowNode {
    std::string key;    ///< "select_idle_sibling", "SIS_TARGET_IDLE", "idle_delay_hit"
    std::string label;  ///< as drawn: "select_idle_sibling()", "SIS_TARGET_IDLE"
    FlowKind kind = FlowKind::Function;
    int parent = -1;        ///< the node it hangs under in the drawing (-1: an entry)
    int depth = 0;          ///< distance from the entries
    std::string function;   ///< the kernel function that holds the branch ("fair.c select_idle_sibling()")
    std::string condition;  ///< what it tests, in the kernel's words
};

struct FlowEdge {
    int from = -1, to = -1;
};

class DecisionFlow {
public:
    /// The graph (built once; the same for every run).
    static const DecisionFlow& get();

    const std::vector<FlowNode>& nodes() const { return m_nodes; }
    const std::vector<FlowEdge>& edges() const { return m_edges; }
    /// Node by key, -1 when there is none.
    int node(std::string_view key) const;
    /// Edge from -> to, -1 when there is none.
    int edge(int from, int to) const;
    /// The exit node of a reason code.
    int exitOf(Stage0 c) const { return m_stage0[std::size_t(c)]; }
    int exitOf(Stage1 c) const { return m_stage1[std::size_t(c)]; }
    int exitOf(IdlestSub c) const { return m_idlest[std::size_t(c)]; }
    int exitOf(Stage2 c) const { return m_stage2[std::size_t(c)]; }

    /// The edges decision `d` took, in the kernel's order (entry first; the select_task_rq_fair()
    /// branch, then select_idle_sibling()'s, then the variants' marks). Appends to `out`.
    void path(const Decision& d, std::vector<int>& out) const;
    /// The nodes a traced decision lights: its path's, and the functions its steps passed through
    /// without deciding (select_idle_smt() finding nothing before select_idle_cpu(),
    /// wake_affine_idle() before wake_affine_weight()); sorted, each once.
    std::vector<int> lit(const Decision& d) const;
    /// The node of a kernel function a step names (find_idlest_group*() -> find_idlest_cpu(),
    /// select_fallback_rq() -> FALLBACK_RQ), -1 for one after the placement (ttwu_queue_cond(), ...).
    int nodeOf(Fn fn) const;
    /// A wakeup that found its task still queued (ttwu_runnable(), no Decision): its edge.
    int runnableEdge() const { return m_runnableEdge; }

    /// Nodes in drawing order (depth first, children in the kernel's order).
    const std::vector<int>& order() const { return m_order; }
    const std::vector<int>& children(int n) const { return m_children[std::size_t(n)]; }

private:
    DecisionFlow();
    int add(std::string key, std::string label, FlowKind kind, int parent, std::string function, std::string condition);
    void link(int from, int to);

    std::vector<FlowNode> m_nodes;
    std::vector<FlowEdge> m_edges;
    std::vector<std::vector<int>> m_children;
    std::vector<int> m_order;
    std::vector<int> m_stage0, m_stage1, m_idlest, m_stage2;
    std::vector<int> m_treeEdge;           ///< per node: the edge from its parent (-1 for an entry)
    int m_forkEdge = -1, m_execEdge = -1;  ///< wake_up_new_task() / sched_exec() -> select_task_rq()
    int m_runnableEdge = -1;
    int m_ttwu = -1, m_fork = -1, m_exec = -1, m_rq = -1, m_fair = -1, m_sis = -1, m_delay = -1, m_claim = -1;
};

/// Decisions per edge (and per node: the decisions that reached it).
struct FlowCounts {
    std::vector<std::uint64_t> edges;  ///< index: DecisionFlow edge
    std::vector<std::uint64_t> nodes;  ///< index: DecisionFlow node
    std::uint64_t total = 0;           ///< decisions counted (ttwu_runnable wakeups included)

    void add(const Decision& d);
    void addRunnable();
    void clear();
    /// Saves or restores the counts (checkpoints).
    void state(StateArchive& ar);
    /// Decisions through node `n` (entries: the placements that started there).
    std::uint64_t node(int n) const { return n >= 0 && std::size_t(n) < nodes.size() ? nodes[std::size_t(n)] : 0; }
    std::uint64_t edge(int e) const { return e >= 0 && std::size_t(e) < edges.size() ? edges[std::size_t(e)] : 0; }

private:
    std::vector<int> m_path;  ///< reused
};

/// The graph as a fixed-width tree for a mail: one line per node with the decisions that
/// reached it (count and share of all) for A and, when `b` is given, for B and the change in
/// share (percentage points). Nodes no decision reached on either side are left out unless
/// `all`. `nameA` / `nameB` head the columns.
std::string flowText(const FlowCounts& a, const FlowCounts* b, const std::string& nameA, const std::string& nameB, bool all = false);

}  // namespace sched
