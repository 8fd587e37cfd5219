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
#include "qreplay/isolate.h"
#include "qreplay/isolate_run.h"
#include "qreplay/recording.h"
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
    {"from",
     0,
     CLI_VALUE,
     "WHAT",
     "pcap (default: the recorded captures and /received) or light (DIR/light.qrl, from\n"
     "                         qreplay light: the fates from the record alone; each replay is\n"
     "                         compared with the record's packets regenerated without jitter)"},
    {"at-once",
     0,
     CLI_FLAG,
     nullptr,
     "deliver every packet the runtime delivered at once, in order, not at its recorded\n"
     "                         arrival: which connections repeat without their receive times\n"
     "                         (those qreplay light leaves them out of)"},
    {"no-figures", 0, CLI_FLAG, nullptr, "with --trace: do not draw the figures"},
    {"captured-tcp",
     0,
     CLI_VALUE,
     "WHICH",
     "imports: whose TCP the captured hosts ran: kernel (default: refused, an isolated\n"
     "                         replay runs ns-3's TCP and would explain ns-3, not the kernel)\n"
     "                         or ns3 (captures exported from a qreplay run)"},
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
    "DIR/figures (tcp_trace_<flow>.png).\n"
    "\n"
    "An imported recording of real hosts is refused: their TCP is the kernel's, and an\n"
    "isolated replay with ns-3's TCP would say what ns-3 does with their packets, not why the\n"
    "kernel sent them (qreplay diagnose reads the kernel's recovery from the captures).\n"
    "--captured-tcp ns3 says the captures come from a qreplay run (qreplay export).\n",
    kOpts,
    sizeof kOpts / sizeof kOpts[0],
    1,
    1,
    "expected one recording folder DIR",
    nullptr};

/* The ns-3 engine of the core's isolate job (qreplay/isolate_run.h). */
int
EngineReplay(void* ctx, uint32_t flow, int64_t sigma, qr_row_isolated* out, char* errbuf)
{
    return QrEngineCall(errbuf, [&]() -> int {
        *out = static_cast<IsolatedReplay*>(ctx)->Run(flow, sigma, 1);
        return 0;
    });
}

int
EngineTrace(void* ctx, uint32_t flow, int64_t delackNs, qr_tcp_trace** out, char* errbuf)
{
    return QrEngineCall(errbuf, [&]() -> int {
        static_cast<IsolatedReplay*>(ctx)->Run(flow, 0, 1, out, delackNs);
        return 0;
    });
}

/* The printed TCP traces, kept until the table is printed. */
struct Printer
{
    cli_progress* progress;
    std::vector<std::string> traces;
};

int
OnProgress(void* ctx, const char* status)
{
    return cli_progress_status(static_cast<Printer*>(ctx)->progress, status);
}

void
OnTrace(void* ctx, const qr_tcp_trace* tr)
{
    char* buf = nullptr;
    size_t len = 0;
    FILE* mem = open_memstream(&buf, &len);
    if (!mem)
        return;
    cli_print_tcp_trace(tr, mem);
    fclose(mem);
    static_cast<Printer*>(ctx)->traces.emplace_back(buf, len);
    free(buf);
}

/* A connection list: "all" or qr_parse_index_list's syntax; false (usage error printed in err)
 * when it does not parse. */
bool
FlowList(const std::string& text,
         size_t nFlows,
         const char* option,
         std::vector<uint32_t>& out,
         char* err)
{
    if (text == "all")
    {
        for (uint32_t i = 0; i < nFlows; i++)
            out.push_back(i);
        return true;
    }
    uint64_t* list = nullptr;
    size_t n = 0;
    if (nFlows == 0)
    {
        snprintf(err, QR_ERRBUF_SIZE, "%s: the recording has no flows", option);
        return false;
    }
    if (qr_parse_index_list(text.c_str(), nFlows - 1, option, &list, &n, err))
        return false;
    out.assign(list, list + n);
    qr_index_list_free(list);
    return true;
}

/* The light record of recDir opened into light and its packets regenerated into *rec. Returns
 * -1, or the exit status after the error or the interrupt. */
int
IsolateFromLight(const std::string& recDir,
                 cli_progress* p,
                 std::unique_ptr<qr_light, void (*)(qr_light*)>& light,
                 qr_recording** rec)
{
    char err[QR_ERRBUF_SIZE];
    qr_light* l = nullptr;
    if (qr_light_open(&l, (recDir + "/light.qrl").c_str(), err))
        return cli_fail("isolate", "%s", err);
    light.reset(l);
    if (cli_check_light("isolate",
                        recDir.c_str(),
                        cli_shown((recDir + "/light.qrl").c_str()),
                        qr_light_id(l)))
        return 1;
    try
    {
        uint64_t compared, unmarkable;
        cli_catch_signals();
        *rec = QrLightRegenerate(l, nullptr, p, &compared, &unmarkable);
        cli_restore_signals();
    }
    catch (const std::exception& e)
    {
        cli_progress_done(p);
        cli_restore_signals();
        if (cli_signal)
        {
            fprintf(stderr, "qreplay isolate: interrupted; nothing written\n");
            return cli_interrupted_status();
        }
        return cli_fail("isolate", "%s", e.what());
    }
    return -1;
}

/* The table of the replays per sigma, the TCP execution traces, and where they went. */
void
PrintIsolated(const int64_t* sigmas,
              size_t nSigmas,
              size_t nFlows,
              const std::vector<qr_isolated_summary>& sums,
              const Printer& printer,
              const std::string& path)
{
    printf("%-10s %8s %10s %14s %14s %8s %12s\n",
           "sigma",
           "conns",
           "identical",
           "max send diff",
           "max p99 diff",
           "late",
           "max late");
    for (size_t k = 0; k < nSigmas; k++)
        printf("%-10s %8zu %10" PRIu64 " %14s %14s %8" PRIu64 " %12s\n",
               FormatTime(sigmas[k]).c_str(),
               nFlows,
               sums[k].identical,
               FormatTime(sums[k].max_send_diff_ns).c_str(),
               FormatTime(sums[k].max_p99_send_diff_ns).c_str(),
               sums[k].late,
               FormatTime(sums[k].max_late_ns).c_str());
    if (!printer.traces.empty())
        printf("TCP execution traces (exact replay, /tcp_trace):\n");
    for (const std::string& l : printer.traces)
        printf("  %s", l.c_str());
    printf("output             %s\n", cli_shown(path.c_str()));
}

} // namespace

/* The recording in recDir, or the light record beside it (--from light) with its regenerated
 * recording. Returns -1, or the exit code after saying why not. */
static int
OpenForIsolate(const std::string& recDir,
               const std::string& from,
               const std::string& captured,
               cli_progress* p,
               std::unique_ptr<qr_light, void (*)(qr_light*)>& light,
               std::unique_ptr<qr_recording, void (*)(qr_recording*)>& rec)
{
    char err[QR_ERRBUF_SIZE];
    qr_recording* recRaw = nullptr;
    if (from == "light")
    {
        int rc = IsolateFromLight(recDir, p, light, &recRaw);
        if (rc >= 0)
            return rc;
    }
    else if (qr_recording_open(&recRaw, recDir.c_str(), nullptr, err))
        return cli_fail("isolate", "%s", err);
    rec.reset(recRaw);
    if (qr_recording_imported(rec.get()) && captured != "ns3")
        return cli_fail(
            "isolate",
            "%s: an import of real hosts' captures: their TCP is the kernel's, and an "
            "isolated replay runs ns-3's, so it would explain ns-3, not what the kernel "
            "did (qreplay diagnose reads the kernel's recovery from the captures; "
            "--captured-tcp ns3 if the captures come from a qreplay run)",
            recDir.c_str());
    return -1;
}

/* The exit code of qr_isolate_run's rc, after saying why it is not 0. */
static int
IsolateStatus(int rc, const char* err)
{
    if (rc == QR_ECANCELED)
    {
        fprintf(stderr, "qreplay isolate: interrupted; nothing written\n");
        return cli_interrupted_status();
    }
    return rc ? cli_fail("isolate", "%s", err) : 0;
}

/* 1 after saying so when the traced retransmissions were not the recorded ones, else 0. */
static int
RepeatStatus(int allMatch)
{
    if (allMatch)
        return 0;
    fprintf(stderr,
            "qreplay isolate: the traced retransmissions differ from the recorded ones "
            "(see above); the replay did not repeat the runtime\n");
    return 1;
}

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
    bool atOnce = cli_count(&a, "at-once") > 0;
    bool quiet = cli_count(&a, "quiet") > 0;
    std::string captured = cli_value(&a, "captured-tcp") ? cli_value(&a, "captured-tcp") : "kernel";
    std::string from = cli_value(&a, "from") ? cli_value(&a, "from") : "pcap";
    std::string dir = a.pos[0];
    bool inDir = !cli_value(&a, "out");
    std::string path = inDir ? "" : cli_value(&a, "out");
    cli_args_free(&a);
    int64_t sigmas[QR_LIST_MAX];
    size_t nSigmas = 0;
    char err[QR_ERRBUF_SIZE];
    if (qr_parse_time_list(sigmaText, sigmas, QR_LIST_MAX, &nSigmas, err))
        return cli_usage_error("isolate", "--sigma: %s", err);
    if (from != "pcap" && from != "light")
        return cli_usage_error("isolate", "--from: '%s' is neither pcap nor light", from.c_str());
    if (captured != "kernel" && captured != "ns3")
        return cli_usage_error("isolate",
                               "--captured-tcp: '%s' is not kernel or ns3",
                               captured.c_str());
    if (inDir)
    {
        // DIR/isolated.h5 and its figures: the folder is the transaction (main commits it)
        const char* work = cli_output_folder("isolate", dir.c_str(), quiet);
        if (!work)
            return 1;
        dir = work;
        path = dir + "/isolated.h5";
    }
    char recBuf[4200];
    cli_recording_dir(dir.c_str(), recBuf, sizeof recBuf);
    std::string recDir = recBuf;
    {
        cli_paths in{}, outs{};
        cli_paths_add_recording(&in, recDir.c_str());
        cli_paths_add(&outs, "%s", path.c_str());
        if (cli_check_outputs("isolate", &outs, &in))
            return 1;
    }
    cli_progress p;
    cli_progress_init(&p, quiet);
    std::unique_ptr<qr_light, void (*)(qr_light*)> light(nullptr, qr_light_close);
    std::unique_ptr<qr_recording, void (*)(qr_recording*)> rec(nullptr, qr_recording_close);
    if ((rc = OpenForIsolate(recDir, from, captured, &p, light, rec)) >= 0)
        return rc;
    size_t nFlows = qr_flow_table_flows(qr_recording_flows(rec.get()));
    std::vector<uint32_t> flows, traced;
    if (!FlowList(flowsText, nFlows, "--flows", flows, err) ||
        (!traceText.empty() && !FlowList(traceText, nFlows, "--trace", traced, err)))
        return cli_usage_error("isolate", "%s (flows of the recording)", err);
    int64_t* offsetsRaw = nullptr;
    if (!light && (rc = cli_clock_offsets("isolate", recDir.c_str(), rec.get(), &offsetsRaw)))
        return rc;
    std::unique_ptr<int64_t, void (*)(void*)> offsets(offsetsRaw, free);
    cli_catch_signals();
    std::vector<qr_isolated_summary> sums(nSigmas);
    int allMatch = 1;
    try
    {
        std::unique_ptr<IsolatedReplay> isoOwned(
            light ? new IsolatedReplay(light.get(), rec.get())
                  : new IsolatedReplay(qr_recording_scenario(rec.get()), rec.get(), offsets.get()));
        IsolatedReplay& iso = *isoOwned;
        iso.SetArriveAtOnce(atOnce);
        Printer printer{&p, {}};
        qr_isolate_job job{};
        job.rec = rec.get();
        job.rec_dir = recDir.c_str();
        job.out = path.c_str();
        job.flows = flows.data();
        job.n_flows = flows.size();
        job.sigmas_ns = sigmas;
        job.n_sigmas = nSigmas;
        job.traced = traced.data();
        job.n_traced = traced.size();
        job.replay = EngineReplay;
        job.trace = EngineTrace;
        job.engine_ctx = &iso;
        job.on_trace = OnTrace;
        job.progress = OnProgress;
        job.progress_ctx = &printer;
        rc = qr_isolate_run(&job, sums.data(), &allMatch, err);
        cli_progress_done(&p);
        rc = IsolateStatus(rc, err);
        if (rc == 0 && !quiet)
            PrintIsolated(sigmas, nSigmas, flows.size(), sums, printer, path);
        if (rc == 0)
            rc = RepeatStatus(allMatch);
        if (rc == 0 && !traced.empty() && figures)
        {
            fflush(stdout);
            std::string figdir = dir + "/figures";
            rc = cli_figures("isolate", "plot_tcp_trace.py", path.c_str(), figdir.c_str(), quiet);
        }
    }
    catch (const std::exception& e)
    {
        cli_progress_done(&p);
        rc = cli_fail("isolate", "%s", e.what());
    }
    cli_restore_signals();
    return rc;
}
