/* qreplay tiers: a multi-tier service (tiers.h) over ns-3's TCP, recorded as its applications saw
 * it (a message trace) with its truth beside it, for qreplay paths. */
#include "helper/tiers-run.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "cli.h"
#include "opt.h"
#include "program.h"
#include "testbed_net.h"

#include <unistd.h>

extern "C"
{
#include "qreplay/error.h"
#include "qreplay/messages.h"
#include "qreplay/scenario.h"
#include "qreplay/tiers.h"
#include "qreplay/tiers_truth.h"
#include "qreplay/units.h"
}

using namespace ns3;

static const cli_opt kOpts[] = {
    {"network",
     0,
     CLI_VALUE,
     "INI",
     "a scenario whose network runs the service: [topology], [links], [buffer], [tcp], "
     "[clock], [faults] link faults (default: a star of the service's hosts)"},
    CLI_OPT_SET,
    {"rate", 0, CLI_VALUE, "R", "client requests per second (the spec's rate)"},
    {"duration", 0, CLI_VALUE, "T", "how long the clients send requests (1s)"},
    {"stop",
     0,
     CLI_VALUE,
     "T",
     "the latest simulated time; requests still unanswered then are counted (duration + 10s)"},
    {"seed", 0, CLI_VALUE, "N", "the service's random choices and ns-3's (the scenario's seed)"},
    {"pcap",
     0,
     CLI_FLAG,
     nullptr,
     "also capture every host of the service as tcpdump on its NIC would, on its own clock: "
     "DIR/pcap/hN.pcap and DIR/hosts.csv (for qreplay import, diagnose, paths)"},
    {"testbed",
     0,
     CLI_FLAG,
     nullptr,
     "run on the namespace testbed instead (root): real Linux TCP on a star, every host of the "
     "service a Python process (testbed/tiers.py), each host captured"},
    CLI_OPT_OUT("write DIR/messages.csv (what the applications saw) and DIR/truth/tiers.csv "
                "(--testbed: DIR/pcap/hN.pcap and DIR/hosts.csv instead of the trace; required)"),
    CLI_OPT_QUIET,
};

static const cli_spec kSpec = {
    "tiers",
    "SPEC",
    "Run the multi-tier service of SPEC (tiers of hosts calling each other; scenarios/tiers/,\n"
    "docs/FORMATS.md) over ns-3's TCP on a scenario's network: clients send requests at Poisson\n"
    "times, each tier's hosts serve them with their workers and make their calls over persistent\n"
    "connections of their pools, the planted slow hosts and links slow them. The core's machine\n"
    "decides every message; ns-3 carries it.\n\n"
    "DIR/messages.csv is what the applications saw, as WAP5's socket-call library logs it: each\n"
    "message's send call on the sender's clock and the read of its last byte on the receiver's\n"
    "(clocks off by the scenario's [clock] max_offset). DIR/truth/tiers.csv holds every\n"
    "message's id and parent and the service's spec with its faults: only scorers read it.\n"
    "Then: qreplay paths --messages DIR/messages.csv --outside CLIENTS --truth\n"
    "DIR/truth/tiers.csv (the analysis is told the clients; it never reads the truth).\n\n"
    "--testbed runs the service on real Linux TCP instead: a star of network namespaces (the\n"
    "network scenario's [links] and [tcp]; without one, 1 Gb/s), every host of the service a\n"
    "Python process (testbed/tiers.py: worker threads, persistent connection pools, a slow host\n"
    "computing slower), each planted slow link a shaper on the switch (a full-size packet\n"
    "between its hosts takes the fault's delay), every host captured by tcpdump. Each message\n"
    "carries its id and its parent's; each host logs what it sent and read, gathered into\n"
    "DIR/truth/tiers.csv. Then: qreplay paths --map DIR/hosts.csv DIR/pcap/h*.pcap --outside\n"
    "CLIENTS --truth DIR/truth/tiers.csv.\n",
    kOpts,
    sizeof kOpts / sizeof kOpts[0],
    1,
    1,
    "expected one service spec",
    "  qreplay tiers scenarios/tiers/three-tier-faults.tiers -o /tmp/tiers\n"
    "  qreplay paths --messages /tmp/tiers/messages.csv --outside 0,1,2 --truth "
    "/tmp/tiers/truth/tiers.csv -o /tmp/tiers/paths\n"
    "  qreplay tiers scenarios/tiers/three-tier.tiers --network scenarios/single-switch.ini "
    "--set clock.max_offset=1ms --rate 3000 -o /tmp/t3\n"
    "  sudo qreplay tiers scenarios/tiers/three-tier-faults.tiers --testbed -o /tmp/tb\n"
    "  qreplay paths --map /tmp/tb/hosts.csv /tmp/tb/pcap/h*.pcap --outside 0,1,2 --truth "
    "/tmp/tb/truth/tiers.csv\n"};

/* The network: --network's scenario, else a star of the service's hosts; with the overrides. */
static int
LoadNetwork(const cli_args* a, const qr_tiers_spec* spec, qr_scenario** s)
{
    int nSets = 0;
    const char** sets = cli_list(a, "set", &nSets);
    const char* net = cli_value(a, "network");
    if (net)
        return cli_load_scenario("tiers", net, sets, nSets, s);
    char err[QR_ERRBUF_SIZE], text[256];
    snprintf(text,
             sizeof text,
             "[topology]\nkind = star\nhosts = %u\n%s",
             qr_tiers_hosts(spec) < 2 ? 2u : qr_tiers_hosts(spec),
             cli_count(a, "testbed") ? "[links]\nrate = 1Gbps\n" : "");
    if (qr_scenario_create(s))
        return cli_fail("tiers", "out of memory");
    int rc = qr_scenario_load_string(*s, text, "the default star", ".", err);
    for (int i = 0; !rc && i < nSets; i++)
        rc = qr_scenario_set(*s, sets[i], err);
    if (!rc)
        rc = qr_scenario_validate(*s, err);
    if (rc)
    {
        qr_scenario_destroy(*s);
        *s = nullptr;
        return cli_fail("tiers", "%s", err);
    }
    return 0;
}

static int
ParseRun(const cli_args* a,
         const qr_config* c,
         qr_tiers_spec* spec,
         int64_t* dur,
         int64_t* stop,
         uint64_t* seed)
{
    char err[QR_ERRBUF_SIZE];
    const char *rate = cli_value(a, "rate"), *d = cli_value(a, "duration"),
               *st = cli_value(a, "stop"), *sd = cli_value(a, "seed");
    *dur = 1000000000;
    *seed = c->run.seed;
    if (rate)
    {
        char* e;
        double r = strtod(rate, &e);
        if (e == rate || *e || !(r > 0) || r > 1e7)
            return cli_usage_error("tiers",
                                   "--rate: '%s' is not a rate in (0, 1e7] per second",
                                   rate);
        spec->rate_per_s = r;
    }
    if (d && (qr_parse_time_ns(d, dur, err) || *dur <= 0))
        return cli_usage_error("tiers", "--duration: %s", *dur <= 0 ? "must be positive" : err);
    *stop = *dur + 10000000000LL;
    if (st && (qr_parse_time_ns(st, stop, err) || *stop < *dur))
        return cli_usage_error("tiers",
                               "--stop: %s",
                               *stop < *dur ? "before --duration ends" : err);
    char* e = nullptr;
    if (sd && (*seed = strtoull(sd, &e, 10), *e || *sd == '-' || !*sd))
        return cli_usage_error("tiers", "--seed: '%s' is not a number", sd);
    return 0;
}

/* The service as tiers.py reads it (JSON): every address, the tiers with their stages, the
 * clients and their rate, the slow hosts. Returns 0 or 1 after printing. */
static int
WritePlan(const std::string& path, const qr_tiers_spec* s, int64_t dur, uint64_t seed)
{
    FILE* f = fopen(path.c_str(), "w");
    if (!f)
        return cli_fail("tiers", "%s: %s", path.c_str(), strerror(errno));
    fprintf(f, "{\"port\": 9000, \"seed\": %" PRIu64 ", \"duration_ns\": %" PRId64, seed, dur);
    fprintf(f, ", \"rate\": %.17g, \"first\": %u, \"addresses\": {", s->rate_per_s, s->first);
    for (uint32_t h = 0; h < qr_tiers_hosts(s); h++)
    {
        char addr[32];
        tb_host_addr(nullptr, h, addr, sizeof addr);
        fprintf(f, "%s\"%u\": \"%s\"", h ? ", " : "", h, addr);
    }
    fprintf(f, "}, \"clients\": [");
    for (uint32_t i = 0; i < s->n_clients; i++)
        fprintf(f, "%s%u", i ? ", " : "", s->clients[i]);
    fprintf(f, "], \"slowness\": {");
    for (uint32_t i = 0, k = 0; i < s->n_faults; i++)
        if (s->faults[i].kind == QR_TIER_SLOW_NODE)
            fprintf(f, "%s\"%u\": %.17g", k++ ? ", " : "", s->faults[i].a, s->faults[i].factor);
    fprintf(f, "}, \"tiers\": [");
    for (uint32_t i = 0; i < s->n_tiers; i++)
    {
        const qr_tier& t = s->tiers[i];
        fprintf(f,
                "%s{\"name\": \"%s\", \"service_ns\": %" PRId64 ", \"workers\": %u, "
                "\"request\": %" PRIu64 ", \"reply\": %" PRIu64 ", \"hosts\": [",
                i ? ", " : "",
                t.name,
                t.service_ns,
                t.workers,
                t.request_bytes,
                t.reply_bytes);
        for (uint32_t h = 0; h < t.n_hosts; h++)
            fprintf(f, "%s%u", h ? ", " : "", t.hosts[h]);
        fprintf(f, "], \"stages\": [");
        for (uint32_t g = 0; g < t.n_stages; g++)
        {
            fprintf(f, "%s[", g ? ", " : "");
            for (uint32_t c = 0; c < t.stages[g].n_calls; c++)
                fprintf(f,
                        "%s{\"tier\": %u, \"p\": %.17g}",
                        c ? ", " : "",
                        t.stages[g].calls[c].tier,
                        t.stages[g].calls[c].probability);
            fprintf(f, "]");
        }
        fprintf(f, "]}");
    }
    fprintf(f, "]}\n");
    return fclose(f) ? cli_fail("tiers", "%s: %s", path.c_str(), strerror(errno)) : 0;
}

/* work/hosts.csv: each host's address and number, and the capture taken at it (hN.pcap).
 * Returns 0 or the exit status. */
static int
WriteHostMap(const std::string& work,
             uint32_t hosts,
             const std::function<std::string(uint32_t)>& addr)
{
    std::string map = work + "/hosts.csv";
    FILE* f = fopen(map.c_str(), "w");
    if (!f)
        return cli_fail("tiers", "%s: %s", map.c_str(), strerror(errno));
    fprintf(f, "address,host,capture\n");
    for (uint32_t h = 0; h < hosts; h++)
        fprintf(f, "%s,%u,h%u.pcap\n", addr(h).c_str(), h, h); /* each capture at its host */
    if (fclose(f))
        return cli_fail("tiers", "%s: %s", map.c_str(), strerror(errno));
    return 0;
}

/* The hosts' logs gathered into the truth, and the host map for the captures. Returns 0 or 1
 * after printing. */
static int
WriteTestbedTruth(const std::string& work,
                  const qr_tiers_spec* s,
                  const char* specText,
                  const char* comment,
                  bool quiet)
{
    char err[QR_ERRBUF_SIZE];
    std::vector<std::string> logs;
    for (uint32_t h = 0; h < qr_tiers_hosts(s); h++)
    {
        std::string l = work + "/truth/logs/h" + std::to_string(h) + ".log";
        if (access(l.c_str(), R_OK) == 0)
            logs.push_back(l);
    }
    std::vector<const char*> lp;
    for (const auto& l : logs)
        lp.push_back(l.c_str());
    qr_tiers_truth_row* rows = nullptr;
    size_t n = 0;
    qr_tiers_gather_report rep;
    if (qr_tiers_truth_gather(lp.data(), lp.size(), &rows, &n, &rep, err))
        return cli_fail("tiers", "%s", err);
    int rc =
        qr_tiers_truth_write((work + "/truth/tiers.csv").c_str(), specText, rows, n, comment, err)
            ? cli_fail("tiers", "%s", err)
            : 0;
    free(rows);
    if (!rc)
        rc = WriteHostMap(work, qr_tiers_hosts(s), [](uint32_t h) {
            char addr[32];
            tb_host_addr(nullptr, h, addr, sizeof addr);
            return std::string(addr);
        });
    if (!rc && !quiet)
        printf("tiers: the hosts logged %" PRIu64 " messages sent, %" PRIu64 " read whole (%" PRIu64
               " never read, %" PRIu64 " read but never logged as sent)\n",
               rep.sent,
               rep.received,
               rep.never_read,
               rep.unknown_read);
    return rc;
}

/* The service's clients as --outside takes them: "0,1,2". */
static std::string
ClientList(const qr_tiers_spec* spec)
{
    std::string s;
    for (uint32_t i = 0; i < spec->n_clients; i++)
        s += (i ? "," : "") + std::to_string(spec->clients[i]);
    return s;
}

/* --testbed: the service on real Linux TCP in namespaces. Returns 0 or the exit status. */
static int
RunTestbed(const cli_args* a,
           const qr_config* c,
           const qr_tiers_spec* spec,
           const char* specFile,
           const char* specText,
           int64_t dur,
           uint64_t seed,
           const char* work)
{
    bool quiet = cli_count(a, "quiet") > 0;
    for (uint32_t i = 0; i < spec->n_tiers; i++)
        if (spec->tiers[i].request_bytes < 24 || spec->tiers[i].reply_bytes < 24)
            return cli_fail("tiers",
                            "%s: tier %s: on the testbed every message carries its ids in its "
                            "first 24 bytes; make request and reply at least 24B",
                            specFile,
                            spec->tiers[i].name);
    if (c->topology.kind != QR_TOPO_STAR)
        return cli_fail("tiers", "--testbed runs the service on a star ([topology] kind = star)");
    const char* tdir = cli_testbed_dir();
    if (!tdir)
        return cli_fail("tiers", "cannot find the testbed folder (tiers.py) next to the program");
    std::string script = std::string(tdir) + "/tiers.py", w = work;
    if (access(script.c_str(), R_OK) != 0)
        return cli_fail("tiers", "%s: %s", script.c_str(), strerror(errno));
    if (cli_make_dir("tiers", (w + "/pcap").c_str()) ||
        cli_make_dir("tiers", (w + "/truth").c_str()) ||
        cli_make_dir("tiers", (w + "/truth/logs").c_str()) ||
        WritePlan(w + "/truth/plan.json", spec, dur, seed))
        return 1;
    std::string plan = w + "/truth/plan.json", logs = w + "/truth/logs", pcap = w + "/pcap";
    tb_run run{};
    run.conf = c;
    run.port_limit = qr_testbed_port_limit(c);
    run.capture_dir = pcap.c_str();
    run.tiers = spec;
    run.tiers_script = script.c_str();
    run.tiers_plan = plan.c_str();
    run.tiers_log_dir = logs.c_str();
    run.tiers_duration_ns = dur;
    run.quiet = quiet;
    int rc = tb_run_testbed("tiers", &run);
    double traffic = run.traffic_s;
    tb_run_free(&run);
    if (rc)
        return rc;
    char comment[1024];
    snprintf(comment,
             sizeof comment,
             "qreplay tiers --testbed %s: %.6g requests/s for %" PRId64 " ns, seed %" PRIu64
             ", real Linux TCP on a star of %" PRIu32 " namespaces at %" PRIu64 " bit/s",
             specFile,
             spec->rate_per_s,
             dur,
             seed,
             qr_config_hosts(c),
             c->links.rate_bps);
    rc = WriteTestbedTruth(w, spec, specText, comment, quiet);
    if (!rc && !quiet)
        printf("tiers: the clients were done after %.1f s; wrote %s/pcap/hN.pcap, %s/hosts.csv "
               "and %s/truth/tiers.csv\nthen: qreplay paths --map %s/hosts.csv %s/pcap/h*.pcap "
               "--outside %s --truth %s/truth/tiers.csv\n",
               traffic,
               cli_shown(cli_value(a, "out")),
               cli_shown(cli_value(a, "out")),
               cli_shown(cli_value(a, "out")),
               cli_shown(cli_value(a, "out")),
               cli_shown(cli_value(a, "out")),
               ClientList(spec).c_str(),
               cli_shown(cli_value(a, "out")));
    return rc;
}

/* What a run made and the command that reads it next. */
static void
PrintRun(const cli_args* a,
         const qr_tiers_spec* spec,
         const TiersRun& run,
         uint64_t req,
         uint64_t ans,
         bool pcap)
{
    const auto& m = run.Messages();
    uint64_t unread = 0;
    for (const auto& x : m)
        unread += x.recv_ns == QR_MSG_UNTRACED;
    printf("tiers: %" PRIu64 " requests, %" PRIu64 " answered by %.3f ms; %zu messages "
           "(%" PRIu64 " never read whole)\n",
           req,
           ans,
           run.End().GetSeconds() * 1e3,
           m.size(),
           unread);
    const char* out = cli_shown(cli_value(a, "out"));
    if (pcap)
        printf("wrote %s/pcap/hN.pcap and %s/hosts.csv (each host's NIC, on its clock)\n",
               out,
               out);
    printf("wrote %s/messages.csv and %s/truth/tiers.csv\nthen: qreplay paths "
           "--messages %s/messages.csv --outside %s --truth %s/truth/tiers.csv\n",
           out,
           out,
           out,
           ClientList(spec).c_str(),
           out);
}

/* Run and write. Returns 0 or the exit status. */
static int
RunAndWrite(const cli_args* a,
            const qr_config* c,
            const qr_tiers_spec* spec,
            const char* specFile,
            const char* specText,
            int64_t dur,
            int64_t stop,
            uint64_t seed,
            const char* work)
{
    bool quiet = cli_count(a, "quiet") > 0;
    char err[QR_ERRBUF_SIZE];
    cli_progress progress;
    cli_progress_init(&progress, quiet);
    try
    {
        TiersRun run(c, spec, seed, dur);
        bool pcap = cli_count(a, "pcap") > 0;
        std::string pcapDir = std::string(work) + "/pcap";
        if (pcap)
        {
            if (cli_make_dir("tiers", pcapDir.c_str()))
                return 1;
            run.EnablePcaps(pcapDir);
        }
        bool done = run.Run(NanoSeconds(stop), &cli_signal, [&](const TiersRun::Progress& p) {
            cli_progress_update(&progress,
                                "tiers: sim %.1f ms | %" PRIu64 " requests, %" PRIu64
                                " answered | %" PRIu64 " messages",
                                p.now.GetSeconds() * 1e3,
                                p.requests,
                                p.answered,
                                p.messages);
        });
        cli_progress_done(&progress);
        if (!done)
            return cli_interrupted_status();
        uint64_t req, ans;
        run.Counts(&req, &ans);
        char comment[1024];
        snprintf(comment,
                 sizeof comment,
                 "qreplay tiers %s: %.6g requests/s for %" PRId64 " ns, seed %" PRIu64
                 ", over ns-3 (%s, %" PRIu32 " hosts, clocks within %" PRId64 " ns)",
                 specFile,
                 spec->rate_per_s,
                 dur,
                 seed,
                 c->topology.kind == QR_TOPO_FATTREE ? "fat tree" : "star",
                 qr_config_hosts(c),
                 c->clock.max_offset_ns);
        std::string msgs = std::string(work) + "/messages.csv",
                    truthDir = std::string(work) + "/truth", truth = truthDir + "/tiers.csv";
        const auto& m = run.Messages();
        const auto& t = run.Truth();
        if (qr_msgs_write(msgs.c_str(), m.data(), m.size(), comment, err))
            return cli_fail("tiers", "%s", err);
        if (cli_make_dir("tiers", truthDir.c_str()))
            return 1;
        if (qr_tiers_truth_write(truth.c_str(), specText, t.data(), t.size(), comment, err))
            return cli_fail("tiers", "%s", err);
        if (pcap)
        {
            run.ClosePcaps();
            if (WriteHostMap(work, qr_tiers_hosts(spec), [&](uint32_t h) {
                    return run.HostAddress(h);
                }))
                return 1;
        }
        if (!quiet)
            PrintRun(a, spec, run, req, ans, pcap);
        if (req != ans)
            fprintf(stderr,
                    "tiers: %" PRIu64 " requests unanswered at --stop; their messages are "
                    "in the trace, unread ones without a receive time\n",
                    req - ans);
        return 0;
    }
    catch (const std::exception& e)
    {
        cli_progress_done(&progress);
        return cli_fail("tiers", "%s", e.what());
    }
}

int
qr_cmd_tiers(int argc, char** argv)
{
    cli_args a;
    int rc = cli_parse(&kSpec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    const char* specFile = a.pos[0];
    const char* outp = cli_value(&a, "out");
    char err[QR_ERRBUF_SIZE];
    qr_tiers_spec spec;
    qr_scenario* s = nullptr;
    char* text = nullptr;
    if (!outp)
        rc = cli_usage_error("tiers", "-o DIR is required (where the trace and the truth go)");
    else if (!(text = cli_slurp("tiers", specFile)))
        rc = 1;
    else if (qr_tiers_parse(text, &spec, err))
        rc = cli_fail("tiers", "%s: %s", specFile, err);
    else
        rc = LoadNetwork(&a, &spec, &s);
    int64_t dur = 0, stop = 0;
    uint64_t seed = 0;
    if (!rc)
        rc = ParseRun(&a, qr_scenario_config(s), &spec, &dur, &stop, &seed);
    if (!rc)
    {
        cli_paths ins{}, outs{};
        cli_paths_add(&ins, "%s", specFile);
        if (cli_value(&a, "network"))
            cli_paths_add(&ins, "%s", cli_value(&a, "network"));
        cli_paths_add(&outs, "%s/messages.csv", outp);
        cli_paths_add(&outs, "%s/truth/tiers.csv", outp);
        rc = cli_check_outside("tiers", outp, &ins);
        if (rc)
        {
            cli_paths_free(&outs);
            cli_paths_free(&ins);
        }
        else
            rc = cli_check_outputs("tiers", &outs, &ins);
    }
    const char* work = nullptr;
    if (!rc && !(work = cli_output_folder("tiers", outp, cli_count(&a, "quiet") > 0)))
        rc = 1;
    if (!rc)
    {
        cli_catch_signals();
        if (cli_count(&a, "testbed"))
            rc =
                tb_check_privileges("tiers")
                    ? 1
                    : RunTestbed(&a, qr_scenario_config(s), &spec, specFile, text, dur, seed, work);
        else
            rc = RunAndWrite(&a,
                             qr_scenario_config(s),
                             &spec,
                             specFile,
                             text,
                             dur,
                             stop,
                             seed,
                             work);
        cli_restore_signals();
    }
    free(text);
    qr_scenario_destroy(s);
    cli_args_free(&a);
    return rc;
}
