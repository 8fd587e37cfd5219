/* qreplay isolate: isolated per-connection replays of a recording, at several jitter levels. */
#include "helper/isolated-replay.h"
#include "tables.h"

#include "cli.h"
#include "opt.h"
#include "program.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

extern "C"
{
#include "qreplay/error.h"
#include "qreplay/h5.h"
#include "qreplay/isolate.h"
#include "qreplay/recording.h"
#include "qreplay/scenario_h5.h"
#include "qreplay/schema.h"
#include "qreplay/units.h"
}

using namespace ns3;

namespace
{

const cli_opt kOpts[] = {
    {"sigma", 0, CLI_VALUE, "LIST", "jitter levels (default 0,1ns,10ns,100ns,1us)"},
    {"flows", 0, CLI_VALUE, "F", "all (default) or a list of flow numbers N,M,..."},
    {"trace",
     0,
     CLI_VALUE,
     "IDS",
     "trace these connections' TCP execution (flow numbers N,M,... or all)"},
    {"out", 'o', CLI_VALUE, "OUT.h5", "output file (default DIR/isolated.h5)"},
    {"no-figures", 0, CLI_FLAG, nullptr, "with --trace: do not draw the figures"},
    CLI_OPT_QUIET,
};

const cli_spec kSpec = {
    "isolate",
    "DIR",
    "Replay every TCP connection of a recorded runtime (DIR: a recording, or a run folder\n"
    "holding DIR/recording) alone, with live TCP, on two hosts joined by a packet\n"
    "corrector that applies what the runtime recorded for that connection: which packets\n"
    "were lost and when each reached the other end. Each host's processing delay is drawn\n"
    "with standard deviation sigma around the scenario's [host] proc_delay. For every\n"
    "connection and sigma: is the packet sequence (TCP flags, seq, ack, window, length,\n"
    "both directions, in order) identical to the runtime's, and how far the send times\n"
    "moved (max, p99). Writes OUT.h5 and prints a table.\n"
    "\n"
    "--trace N,M: also trace those connections' TCP execution in an exact replay (sigma 0):\n"
    "the sender's segments, congestion window, slow-start threshold, congestion state, RTO,\n"
    "RTT, bytes in flight and windows from ns-3's TCP trace sources, the receiver's segments\n"
    "at its interface; every retransmission with its trigger (rto, after-rto,\n"
    "fast-retransmit, recovery) and the duplicate-ACK count when it went out, the delayed\n"
    "ACKs, the lost packets. Written to OUT.h5 /tcp_trace/<flow>; checked against the\n"
    "recording (the traced retransmissions must be exactly the recorded ones; exit 1 if\n"
    "not); drawn as a time-sequence diagram over cwnd/ssthresh/windows per connection in\n"
    "DIR/figures (tcp_trace_<flow>.png).\n",
    kOpts,
    sizeof kOpts / sizeof kOpts[0],
    1,
    1,
    "expected one recording folder DIR",
    nullptr};

struct Interrupted : std::exception
{
};

} // namespace

extern "C" int
qr_cmd_isolate(int argc, char** argv)
{
    cli_args a;
    int rc = cli_parse(&kSpec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    const char* sigmaText =
        cli_value(&a, "sigma") ? cli_value(&a, "sigma") : "0,1ns,10ns,100ns,1us";
    std::string flowsText = cli_value(&a, "flows") ? cli_value(&a, "flows") : "all";
    std::string traceText = cli_value(&a, "trace") ? cli_value(&a, "trace") : "";
    bool figures = cli_count(&a, "no-figures") == 0;
    bool quiet = cli_count(&a, "quiet") > 0;
    std::string dir = a.pos[0];
    std::string path = cli_value(&a, "out") ? cli_value(&a, "out") : dir + "/isolated.h5";
    cli_args_free(&a);
    int64_t sigmas[QR_LIST_MAX];
    size_t nSigmas = 0;
    char err[QR_ERRBUF_SIZE];
    if (qr_parse_time_list(sigmaText, sigmas, QR_LIST_MAX, &nSigmas, err))
        return cli_usage_error("isolate", "--sigma: %s", err);
    char recBuf[4200];
    cli_recording_dir(dir.c_str(), recBuf, sizeof recBuf);
    std::string recDir = recBuf;
    cli_progress p;
    cli_progress_init(&p, quiet);
    cli_catch_signals();
    rc = 0;
    qr_h5* f = nullptr;
    qr_h5_table* t = nullptr;
    qr_recording* recRaw = nullptr;
    try
    {
        {
            cli_paths in{}, outs{};
            cli_paths_add_recording(&in, recDir.c_str());
            cli_paths_add(&outs, "%s", path.c_str());
            int bad = cli_check_outputs("isolate", &outs, &in);
            if (bad)
                throw std::runtime_error("");
        }
        if (qr_recording_open(&recRaw, recDir.c_str(), nullptr, err))
            throw std::runtime_error(err);
        std::unique_ptr<qr_recording, void (*)(qr_recording*)> rec(recRaw, qr_recording_close);
        const qr_scenario* scenario = qr_recording_scenario(rec.get());
        IsolatedReplay iso(scenario, rec.get());
        std::vector<uint32_t> flows;
        size_t nFlows = qr_flow_table_flows(qr_recording_flows(rec.get()));
        if (flowsText == "all")
        {
            for (uint32_t i = 0; i < nFlows; i++)
                flows.push_back(i);
        }
        else
        {
            uint64_t* list = nullptr;
            size_t n = 0;
            if (nFlows == 0 ||
                qr_parse_index_list(flowsText.c_str(), nFlows - 1, "--flows", &list, &n, err))
            {
                cli_restore_signals();
                return cli_usage_error("isolate",
                                       "%s (flows of the recording)",
                                       nFlows ? err : "--flows: the recording has no flows");
            }
            flows.assign(list, list + n);
            qr_index_list_free(list);
        }
        std::vector<uint32_t> traced;
        if (traceText == "all")
        {
            for (uint32_t i = 0; i < nFlows; i++)
                traced.push_back(i);
        }
        else if (!traceText.empty())
        {
            uint64_t* list = nullptr;
            size_t n = 0;
            if (nFlows == 0 ||
                qr_parse_index_list(traceText.c_str(), nFlows - 1, "--trace", &list, &n, err))
            {
                cli_restore_signals();
                return cli_usage_error("isolate",
                                       "%s (flows of the recording)",
                                       nFlows ? err : "--trace: the recording has no flows");
            }
            traced.assign(list, list + n);
            qr_index_list_free(list);
        }
        auto check = [&err](int x) {
            if (x)
                throw std::runtime_error(err);
        };
        check(qr_h5_create(&f, path.c_str(), err));
        check(qr_scenario_write_h5(scenario, f, "/", err));
        check(qr_h5_attr_str(f, "/", "kind", "qreplay isolated replay", err));
        check(qr_h5_attr_str(f, "/", "recording", recDir.c_str(), err));
        check(qr_h5_table_open_schema(&t, f, "/connections", &qr_schema_isolated, err));
        std::vector<std::string> lines;
        for (size_t k = 0; k < nSigmas; k++)
        {
            int64_t sigma = sigmas[k];
            qr_isolated_summary sum{};
            for (size_t i = 0; i < flows.size(); i++)
            {
                if (cli_signal)
                    throw Interrupted();
                IsolatedReplay::Result r = iso.Run(flows[i], sigma, 1);
                check(qr_h5_table_append(t, &r, 1, err));
                qr_isolated_summary_add(&sum, &r);
                cli_progress_update(&p,
                                    "isolate: sigma %s, connection %zu/%zu",
                                    FormatTime(sigma).c_str(),
                                    i + 1,
                                    flows.size());
            }
            char line[256];
            snprintf(line,
                     sizeof line,
                     "%-10s %8zu %10" PRIu64 " %14s %14s %8" PRIu64 " %12s",
                     FormatTime(sigma).c_str(),
                     flows.size(),
                     sum.identical,
                     FormatTime(sum.max_send_diff_ns).c_str(),
                     FormatTime(sum.max_p99_send_diff_ns).c_str(),
                     sum.late,
                     FormatTime(sum.max_late_ns).c_str());
            lines.push_back(line);
        }
        qr_h5_table* done = t;
        t = nullptr;
        check(qr_h5_table_close(done, err));
        // TCP execution traces: an exact replay (sigma 0) of each traced connection
        const qr_config* cfg = qr_scenario_config(scenario);
        std::vector<std::string> traceLines;
        bool allMatch = true;
        for (size_t i = 0; i < traced.size(); i++)
        {
            if (cli_signal)
                throw Interrupted();
            qr_tcp_trace* tr = nullptr;
            iso.Run(traced[i], 0, 1, &tr, cfg->tcp.delack_timeout_ns / 2);
            std::unique_ptr<qr_tcp_trace, void (*)(qr_tcp_trace*)> own(tr, qr_tcp_trace_destroy);
            check(qr_tcp_trace_write(tr, f, err));
            allMatch = allMatch && qr_tcp_trace_summary(tr)->matches_recording;
            char* buf = nullptr;
            size_t len = 0;
            FILE* mem = open_memstream(&buf, &len);
            if (!mem)
                throw std::bad_alloc();
            cli_print_tcp_trace(tr, mem);
            fclose(mem);
            traceLines.emplace_back(buf, len);
            free(buf);
            cli_progress_update(&p, "isolate: tracing connection %zu/%zu", i + 1, traced.size());
        }
        if (!traced.empty())
            check(qr_h5_attr_u64(f, "/tcp_trace", "matches_recording", allMatch ? 1 : 0, err));
        qr_h5* file = f;
        f = nullptr;
        check(qr_h5_commit(file, err));
        cli_progress_done(&p);
        if (!quiet)
        {
            printf("%-10s %8s %10s %14s %14s %8s %12s\n",
                   "sigma",
                   "conns",
                   "identical",
                   "max send diff",
                   "max p99 diff",
                   "late",
                   "max late");
            for (const std::string& l : lines)
                printf("%s\n", l.c_str());
            if (!traceLines.empty())
                printf("TCP execution traces (exact replay, /tcp_trace):\n");
            for (const std::string& l : traceLines)
                printf("  %s", l.c_str());
            printf("output             %s\n", path.c_str());
        }
        if (!allMatch)
        {
            fprintf(stderr,
                    "qreplay isolate: the traced retransmissions differ from the recorded ones "
                    "(see above); the replay did not repeat the runtime\n");
            rc = 1;
        }
        if (!traced.empty() && figures && rc == 0)
        {
            fflush(stdout);
            std::string figdir = dir + "/figures";
            rc = cli_figures("isolate", "plot_tcp_trace.py", path.c_str(), figdir.c_str(), quiet);
        }
    }
    catch (const Interrupted&)
    {
        cli_progress_done(&p);
        qr_h5_abort(f);
        fprintf(stderr, "qreplay isolate: interrupted; nothing written\n");
        rc = cli_interrupted_status();
    }
    catch (const std::exception& e)
    {
        cli_progress_done(&p);
        qr_h5_abort(f);
        rc = *e.what() ? cli_fail("isolate", "%s", e.what()) : 1;
    }
    cli_restore_signals();
    return rc;
}
