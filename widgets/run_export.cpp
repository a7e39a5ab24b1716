// SPDX-License-Identifier: GPL-2.0-or-later
// run_export.cpp: see run_export.h.
#include "run_export.h"

#include "sim/engine.h"
#include "trace/trace.h"

#include <QSaveFile>

#include <nlohmann/json.hpp>

#include <cstdlib>

#include <memory>
#include <ostream>
#include <streambuf>
#include <vector>

namespace schedlab {
namespace {

/// A std::ostream's buffer over a QIODevice (FtraceTextWriter writes to an ostream).
class DeviceBuf : public std::streambuf {
public:
    explicit DeviceBuf(QIODevice& d) : m_dev(d), m_buf(1 << 16) { setp(m_buf.data(), m_buf.data() + m_buf.size()); }
    bool failed() const { return m_failed; }

protected:
    int_type overflow(int_type ch) override {
        if (!flush()) return traits_type::eof();
        if (!traits_type::eq_int_type(ch, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(ch);
            pbump(1);
        }
        return traits_type::not_eof(ch);
    }
    int sync() override { return flush() ? 0 : -1; }

private:
    bool flush() {
        const qint64 n = pptr() - pbase();
        if (n > 0 && m_dev.write(pbase(), n) != n) m_failed = true;
        setp(m_buf.data(), m_buf.data() + m_buf.size());
        return !m_failed;
    }
    QIODevice& m_dev;
    std::vector<char> m_buf;
    bool m_failed = false;
};

}  // namespace

QString exportRunFtrace(const sched::Scenario& s, const sched::Knobs& knobs, std::uint64_t seed, std::int64_t untilNs, const QString& path,
                        const std::function<bool(std::int64_t)>& keepGoing) {
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return QStringLiteral("%1: cannot write (%2)").arg(path, f.errorString());
    DeviceBuf buf(f);
    std::ostream out(&buf);
    // As `schedlab-cli run --ftrace`: the engine's event sink feeds an FtraceTextWriter made once
    // the engine exists (it names tasks through the engine).
    std::unique_ptr<sched::FtraceTextWriter> writer;
    sched::RunOptions o;
    o.seed = seed ? seed : s.seed;
    o.event_sink = [&writer](const sched::SchedEvent& e) {
        if (writer) writer->write(e);
    };
    o.wake_inputs_sink = [&writer](const sched::WakeInputs& in) {  // the schedlab_wake lines, as the CLI writes them
        if (writer) writer->writeWakeInputs(in);
    };
    try {
        std::unique_ptr<sched::Engine> eng = sched::buildEngine(s, knobs, s.cost, o);
        const sched::Engine* ep = eng.get();
        writer = std::make_unique<sched::FtraceTextWriter>(out, eng->nrCpus(), [ep](std::int32_t pid) { return ep->taskComm(pid); });
        // Chunked advances give the same run as Engine::run().
        while (!eng->done() && eng->now() < untilNs) {
            eng->advance(std::min<std::int64_t>(1'000'000, untilNs - eng->now()));
            if (keepGoing && !keepGoing(eng->now())) {
                f.cancelWriting();
                return QStringLiteral("cancelled");
            }
            if (buf.failed()) break;
        }
        out.flush();
    } catch (const std::exception& e) {
        f.cancelWriting();
        return QString::fromUtf8(e.what());
    }
    if (buf.failed() || !f.commit()) return QStringLiteral("%1: cannot write (%2)").arg(path, f.errorString());
    return {};
}

QByteArray scenarioWithVariants(const sched::Scenario& s, const sched::Knobs& a, const sched::Knobs* b, std::uint64_t seed) {
    nlohmann::ordered_json doc = nlohmann::ordered_json::parse(s.doc.dump());
    nlohmann::ordered_json v;
    const auto side = [](const sched::Knobs& k) {
        nlohmann::ordered_json j;
        j["preset"] = k.presetName;
        for (const auto& d : k.diffFromBaseline()) {
            const auto eq = d.find('=');
            const std::string key = d.substr(0, eq), val = d.substr(eq + 1);
            char* end = nullptr;
            const long long n = std::strtoll(val.c_str(), &end, 10);
            if (!val.empty() && end && *end == 0) j[key] = n;
            else j[key] = val;
        }
        return j;
    };
    v["A"] = side(a);
    if (b) v["B"] = side(*b);
    doc["variants"] = v;
    doc["seed"] = seed;
    return QByteArray::fromStdString(doc.dump(2) + "\n");
}

QString saveFileAtomic(const QString& path, const QByteArray& data) {
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(data) != data.size() || !f.commit())
        return QStringLiteral("%1: cannot write (%2)").arg(path, f.errorString());
    return {};
}

}  // namespace schedlab
