/* qreplay isolate: isolated per-connection replays of a recording, at several jitter levels. */
#include "helper/butterfly.h"
#include "helper/isolated-replay.h"

#include <getopt.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli.h"
#include "program.h"

extern "C" {
#include "qreplay/error.h"
#include "qreplay/h5.h"
}

using namespace ns3;

namespace
{

void
Help()
{
    printf("usage: qreplay isolate DIR [--sigma LIST] [--flows all|N,M,...] [-o OUT.h5] [--quiet]\n\n"
           "Replay every TCP connection of a recorded runtime (DIR: a recording, or a run folder\n"
           "holding DIR/recording) alone, with live TCP, on two hosts joined by a packet\n"
           "corrector that applies what the runtime recorded for that connection: which packets\n"
           "were lost and when each reached the other end. Each host's processing delay is drawn\n"
           "with standard deviation sigma around the scenario's [host] proc_delay. For every\n"
           "connection and sigma: is the packet sequence (TCP flags, seq, ack, window, length,\n"
           "both directions, in order) identical to the runtime's, and how far the send times\n"
           "moved (max, p99). Writes OUT.h5 (default DIR/isolated.h5) and prints a table.\n\n"
           "options:\n"
           "  --sigma LIST   jitter levels (default 0,1ns,10ns,100ns,1us)\n"
           "  --flows F      all (default) or a list of flow numbers\n"
           "  -o OUT.h5      output file\n"
           "  --quiet        only errors\n");
}

#define F(T, m) offsetof(T, m)
const qr_h5_field kFields[] = {
    {"flow", QR_H5_U32, F(IsolatedReplay::Result, flow), 0, NULL},
    {"sigma_ns", QR_H5_I64, F(IsolatedReplay::Result, sigma_ns), 0, "ns"},
    {"stream", QR_H5_U32, F(IsolatedReplay::Result, stream), 0, NULL},
    {"recorded", QR_H5_U64, F(IsolatedReplay::Result, recorded), 0, "packets"},
    {"replayed", QR_H5_U64, F(IsolatedReplay::Result, replayed), 0, "packets"},
    {"identical", QR_H5_U8, F(IsolatedReplay::Result, identical), 0, "same TCP headers in order"},
    {"first_mismatch", QR_H5_I64, F(IsolatedReplay::Result, first_mismatch), 0, "packet index (-1: none)"},
    {"max_send_diff_ns", QR_H5_I64, F(IsolatedReplay::Result, max_send_diff_ns), 0, "ns"},
    {"p99_send_diff_ns", QR_H5_I64, F(IsolatedReplay::Result, p99_send_diff_ns), 0, "ns"},
    {"late", QR_H5_U64, F(IsolatedReplay::Result, late), 0, "packets"},
    {"max_late_ns", QR_H5_I64, F(IsolatedReplay::Result, max_late_ns), 0, "ns"},
    {"unknown", QR_H5_U64, F(IsolatedReplay::Result, unknown), 0, "packets"}};
#undef F

} // namespace

extern "C" int
qr_cmd_isolate(int argc, char** argv)
{
    static const struct option opts[] = {{"sigma", required_argument, nullptr, 'g'},
                                         {"flows", required_argument, nullptr, 'f'},
                                         {"quiet", no_argument, nullptr, 'q'},
                                         {"help", no_argument, nullptr, 'h'},
                                         {nullptr, 0, nullptr, 0}};
    const char *sigmaText = "0,1ns,10ns,100ns,1us", *flowsText = "all", *out = nullptr;
    bool quiet = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:", opts, nullptr)) != -1)
    {
        switch (c)
        {
        case 'g': sigmaText = optarg; break;
        case 'f': flowsText = optarg; break;
        case 'o': out = optarg; break;
        case 'q': quiet = true; break;
        case 'h': Help(); return 0;
        case ':': return cli_usage_error("isolate", "%s needs a value", argv[optind - 1]);
        default: return cli_usage_error("isolate", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return cli_usage_error("isolate", "expected one recording folder DIR");
    std::vector<int64_t> sigmas;
    std::string perr = ParseSigmas(sigmaText, sigmas);
    if (!perr.empty())
        return cli_usage_error("isolate", "%s", perr.c_str());
    std::string dir = argv[optind];
    struct stat st;
    std::string recDir = stat((dir + "/recording/recording.h5").c_str(), &st) == 0 ? dir + "/recording" : dir;
    std::string path = out ? out : dir + "/isolated.h5";
    cli_progress p;
    cli_progress_init(&p, quiet);
    QrCatchSignals();
    int rc = 0;
    qr_h5* f = nullptr;
    try
    {
        Recording rec(recDir, nullptr);
        IsolatedReplay iso(rec.GetRecordedScenario(), rec);
        std::vector<uint32_t> flows;
        if (!strcmp(flowsText, "all"))
            for (uint32_t i = 0; i < rec.GetFlows().Flows(); i++)
                flows.push_back(i);
        else
        {
            std::string t = flowsText;
            size_t pos = 0;
            while (pos <= t.size())
            {
                size_t comma = t.find(',', pos);
                std::string item = t.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
                char* e = nullptr;
                long v = strtol(item.c_str(), &e, 10);
                if (item.empty() || *e || v < 0 || static_cast<size_t>(v) >= rec.GetFlows().Flows())
                {
                    QrRestoreSignals();
                    return cli_usage_error("isolate", "--flows: '%s' is not a flow of the recording (0 to %zu)",
                                           item.c_str(), rec.GetFlows().Flows() - 1);
                }
                flows.push_back(static_cast<uint32_t>(v));
                if (comma == std::string::npos)
                    break;
                pos = comma + 1;
            }
        }
        char err[QR_ERRBUF_SIZE];
        auto check = [&err](int x) {
            if (x)
                throw std::runtime_error(err);
        };
        check(qr_h5_create(&f, path.c_str(), err));
        check(qr_scenario_write_h5(rec.GetRecordedScenario(), f, "/", err));
        check(qr_h5_attr_str(f, "/", "kind", "qreplay isolated replay", err));
        check(qr_h5_attr_str(f, "/", "recording", recDir.c_str(), err));
        qr_h5_table* t = nullptr;
        check(qr_h5_table_create(&t, f, "/connections", kFields, sizeof kFields / sizeof kFields[0],
                                 sizeof(IsolatedReplay::Result), 0, err));
        std::vector<std::string> lines;
        for (int64_t sigma : sigmas)
        {
            uint64_t same = 0, late = 0;
            int64_t maxDiff = 0, maxP99 = 0, maxLate = 0;
            for (size_t i = 0; i < flows.size(); i++)
            {
                if (g_qr_cancel)
                    throw std::runtime_error("interrupted");
                IsolatedReplay::Result r = iso.Run(flows[i], sigma, 1);
                check(qr_h5_table_append(t, &r, 1, err));
                same += r.identical;
                late += r.late;
                maxLate = std::max(maxLate, r.max_late_ns);
                maxDiff = std::max(maxDiff, r.max_send_diff_ns);
                maxP99 = std::max(maxP99, r.p99_send_diff_ns);
                cli_progress_update(&p, "isolate: sigma %s, connection %zu/%zu", FormatTime(sigma).c_str(), i + 1,
                                    flows.size());
            }
            char line[256];
            snprintf(line, sizeof line, "%-10s %8zu %10" PRIu64 " %14s %14s %8" PRIu64 " %12s", FormatTime(sigma).c_str(),
                     flows.size(), same, FormatTime(maxDiff).c_str(), FormatTime(maxP99).c_str(), late,
                     FormatTime(maxLate).c_str());
            lines.push_back(line);
        }
        check(qr_h5_table_close(t, err));
        qr_h5* done = f;
        f = nullptr;
        check(qr_h5_commit(done, err));
        cli_progress_done(&p);
        if (!quiet)
        {
            printf("%-10s %8s %10s %14s %14s %8s %12s\n", "sigma", "conns", "identical", "max send diff",
                   "max p99 diff", "late", "max late");
            for (const std::string& l : lines)
                printf("%s\n", l.c_str());
            printf("output             %s\n", path.c_str());
        }
    }
    catch (const std::exception& e)
    {
        cli_progress_done(&p);
        qr_h5_abort(f);
        rc = strcmp(e.what(), "interrupted") == 0
                 ? (fprintf(stderr, "qreplay isolate: interrupted; nothing written\n"), 130)
                 : cli_fail("isolate", "%s", e.what());
    }
    QrRestoreSignals();
    return rc;
}
