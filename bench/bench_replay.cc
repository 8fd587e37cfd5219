/* Benchmark: one open-loop replay of a recording with each engine, side by side: the native
 * engine of the core (qr_replay_native) and the ns-3 replay (the reference).
 *
 *   bench_replay RUN_DIR [--th 5us] [--mode tagged|plain] [--engines ns3,native]
 *
 * RUN_DIR holds a recording (RUN_DIR/recording, from qreplay run or qreplay runtime -o
 * RUN_DIR/recording). Each engine runs in its own child process, so that its peak memory is its
 * own: the child opens the recording, samples it at --th, notes its memory (the recording's share,
 * the same for both engines), replays it writing the arrival log to a scratch file, and reports.
 * Prints per engine: wall time of the replay, switch-queue arrivals (packet-hops) and their rate,
 * events, peak RSS and the RSS before the replay, packets in flight at most; then the ratios, and
 * whether the two arrival logs are identical byte for byte. Numbers, never pass/fail. */
#include "helper/pipeline.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C"
{
#include "qreplay/error.h"
#include "qreplay/recording.h"
#include "qreplay/units.h"
}

namespace
{

struct Report
{
    int ok{0};
    double wall{0};
    uint64_t hops{0}, events{0}, drops{0};
    size_t inFlight{0};
    double rssBeforeMb{0};
    char err[QR_ERRBUF_SIZE]{};
};

double
MaxRssMb(int who)
{
    struct rusage ru;
    getrusage(who, &ru);
    return ru.ru_maxrss / 1024.0;
}

/* The child: one replay; the report goes to fd. */
int
Child(const std::string& run,
      const char* engine,
      qr_drop_mode mode,
      int64_t th,
      const std::string& log,
      int fd)
{
    Report r;
    qr_recording* rec = nullptr;
    int rc = qr_recording_open(&rec, (run + "/recording").c_str(), nullptr, r.err);
    const qr_scenario* s = rec ? qr_recording_scenario(rec) : nullptr;
    qr_sampling_stats st{};
    qr_plan* plan = nullptr;
    qr_plan_cursor* cur = nullptr;
    if (!rc)
        rc = qr_plan_sample(&plan,
                            rec,
                            nullptr,
                            qr_scenario_config(s)->sampling.method,
                            th,
                            &st,
                            nullptr,
                            nullptr,
                            r.err);
    if (!rc)
        rc = qr_plan_cursor_create(&cur, rec, plan);
    if (!rc)
    {
        r.rssBeforeMb = MaxRssMb(RUSAGE_SELF);
        qr_replay_opts o{};
        o.mode = mode;
        o.margin_bytes = qr_scenario_config(s)->replay.margin_bytes;
        o.arrivals_path = log.c_str();
        qr_replay_out out{};
        rc = ns3::ReplayEngineByName(
            engine)(nullptr, s, rec, qr_plan_cursor_source(cur), &o, &out, r.err);
        r.wall = out.wall_s;
        r.hops = out.packet_hops;
        r.events = out.events;
        r.drops = out.n_drops;
        r.inFlight = out.peak_in_flight;
        qr_replay_out_free(&out);
    }
    r.ok = rc == 0;
    qr_plan_cursor_free(cur);
    qr_plan_free(plan);
    qr_recording_close(rec);
    ssize_t n = write(fd, &r, sizeof r);
    return n == static_cast<ssize_t>(sizeof r) && r.ok ? 0 : 1;
}

bool
SameFile(const std::string& a, const std::string& b)
{
    FILE *x = fopen(a.c_str(), "rb"), *y = fopen(b.c_str(), "rb");
    bool same = x && y;
    while (same)
    {
        char p[1 << 16], q[1 << 16];
        size_t n = fread(p, 1, sizeof p, x), m = fread(q, 1, sizeof q, y);
        same = n == m && memcmp(p, q, n) == 0;
        if (n == 0)
            break;
    }
    if (x)
        fclose(x);
    if (y)
        fclose(y);
    return same;
}

int
Usage()
{
    fprintf(stderr,
            "usage: bench_replay RUN_DIR [--th TIME] [--mode tagged|plain] "
            "[--engines ns3,native] [--json FILE]\n"
            "  --json FILE  also write the table and the comparisons to FILE (JSON)\n");
    return 2;
}

} // namespace

int
main(int argc, char** argv)
{
    std::string run, engines = "ns3,native", jsonPath;
    int64_t th = 5000;
    qr_drop_mode mode = QR_MODE_TAGGED;
    char err[QR_ERRBUF_SIZE];
    for (int i = 1; i < argc; i++)
    {
        std::string a = argv[i];
        if (a == "--th" && i + 1 < argc)
        {
            if (qr_parse_time_ns(argv[++i], &th, err) || th < 0)
            {
                fprintf(stderr, "bench_replay: --th: %s\n", err);
                return 2;
            }
        }
        else if (a == "--mode" && i + 1 < argc)
        {
            std::string m = argv[++i];
            if (m != "tagged" && m != "plain")
                return Usage();
            mode = m == "tagged" ? QR_MODE_TAGGED : QR_MODE_PLAIN;
        }
        else if (a == "--engines" && i + 1 < argc)
            engines = argv[++i];
        else if (a == "--json" && i + 1 < argc)
            jsonPath = argv[++i];
        else if (a[0] != '-' && run.empty())
            run = a;
        else
            return Usage();
    }
    if (run.empty())
        return Usage();
    std::vector<std::string> names;
    for (size_t p = 0; p <= engines.size();)
    {
        size_t q = engines.find(',', p);
        if (q == std::string::npos)
            q = engines.size();
        names.push_back(engines.substr(p, q - p));
        if (!ns3::ReplayEngineByName(names.back().c_str()))
        {
            fprintf(stderr, "bench_replay: unknown engine '%s'\n", names.back().c_str());
            return 2;
        }
        p = q + 1;
    }
    char base[] = "/tmp/bench-replay-XXXXXX";
    if (!mkdtemp(base))
    {
        perror("bench_replay: mkdtemp");
        return 1;
    }
    printf("# one %s replay of %s at th %.3g us, each engine in its own process\n",
           mode == QR_MODE_TAGGED ? "tagged" : "plain",
           run.c_str(),
           th / 1e3);
    printf("%-8s %10s %12s %14s %12s %12s %12s %10s %8s\n",
           "engine",
           "wall_s",
           "packet_hops",
           "hops_per_s",
           "events",
           "peak_rss_mb",
           "rss_rec_mb",
           "in_flight",
           "drops");
    std::vector<Report> reps;
    std::vector<double> peaks;
    std::vector<std::string> logs;
    for (const std::string& e : names)
    {
        std::string log = std::string(base) + "/" + e + ".qra";
        int fds[2];
        if (pipe(fds) != 0)
            return 1;
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0)
        {
            close(fds[0]);
            _exit(Child(run, e.c_str(), mode, th, log, fds[1]));
        }
        close(fds[1]);
        Report r;
        ssize_t n = read(fds[0], &r, sizeof r);
        close(fds[0]);
        int status = 0;
        struct rusage ru;
        wait4(pid, &status, 0, &ru);
        if (n != static_cast<ssize_t>(sizeof r) || !r.ok)
        {
            fprintf(stderr,
                    "bench_replay: %s: %s\n",
                    e.c_str(),
                    n == static_cast<ssize_t>(sizeof r) ? r.err : "the child died");
            return 1;
        }
        double peak = ru.ru_maxrss / 1024.0;
        // the ns-3 replay does not count the packets it holds
        std::string inFlight = e == "ns3" ? "-" : std::to_string(r.inFlight);
        printf("%-8s %10.3f %12lu %14.0f %12lu %12.1f %12.1f %10s %8lu\n",
               e.c_str(),
               r.wall,
               static_cast<unsigned long>(r.hops),
               r.wall > 0 ? r.hops / r.wall : 0.0,
               static_cast<unsigned long>(r.events),
               peak,
               r.rssBeforeMb,
               inFlight.c_str(),
               static_cast<unsigned long>(r.drops));
        reps.push_back(r);
        peaks.push_back(peak);
        logs.push_back(log);
    }
    // the same numbers as a result file (bench's measurements: wall times and memory)
    std::string json = "{\"mode\": \"" + std::string(mode == QR_MODE_TAGGED ? "tagged" : "plain") +
                       "\", \"th_ns\": " + std::to_string(th) + ", \"engines\": {";
    char buf[1024];
    for (size_t i = 0; i < reps.size(); i++)
    {
        const Report& r = reps[i];
        snprintf(buf,
                 sizeof buf,
                 "%s\"%s\": {\"wall_s\": %.3f, \"packet_hops\": %lu, \"hops_per_s\": %.0f, "
                 "\"events\": %lu, \"peak_rss_mb\": %.1f, \"rss_rec_mb\": %.1f, \"in_flight\": "
                 "%s, \"drops\": %lu}",
                 i ? ", " : "",
                 names[i].c_str(),
                 r.wall,
                 static_cast<unsigned long>(r.hops),
                 r.wall > 0 ? r.hops / r.wall : 0.0,
                 static_cast<unsigned long>(r.events),
                 peaks[i],
                 r.rssBeforeMb,
                 names[i] == "ns3" ? "null" : std::to_string(r.inFlight).c_str(),
                 static_cast<unsigned long>(r.drops));
        json += buf;
    }
    json += "}, \"comparisons\": [";
    for (size_t i = 1; i < reps.size(); i++)
    {
        bool same = SameFile(logs[0], logs[i]);
        printf("%s vs %s: %.1fx faster, peak memory %.2fx (%.1f vs %.1f MB); beyond the "
               "recording %.1f vs %.1f MB; arrival logs %s\n",
               names[i].c_str(),
               names[0].c_str(),
               reps[i].wall > 0 ? reps[0].wall / reps[i].wall : 0.0,
               peaks[0] > 0 ? peaks[i] / peaks[0] : 0.0,
               peaks[i],
               peaks[0],
               peaks[i] - reps[i].rssBeforeMb,
               peaks[0] - reps[0].rssBeforeMb,
               same ? "identical" : "DIFFERENT");
        snprintf(buf,
                 sizeof buf,
                 "%s{\"engine\": \"%s\", \"against\": \"%s\", \"speedup\": %.6g, "
                 "\"memory_ratio\": %.6g, \"logs_identical\": %s}",
                 i > 1 ? ", " : "",
                 names[i].c_str(),
                 names[0].c_str(),
                 reps[i].wall > 0 ? reps[0].wall / reps[i].wall : 0.0,
                 peaks[0] > 0 ? peaks[i] / peaks[0] : 0.0,
                 same ? "true" : "false");
        json += buf;
    }
    json += "]}\n";
    if (!jsonPath.empty())
    {
        std::string tmp = jsonPath + ".partial";
        FILE* f = fopen(tmp.c_str(), "w");
        if (!f || fputs(json.c_str(), f) == EOF || fclose(f) != 0 ||
            rename(tmp.c_str(), jsonPath.c_str()) != 0)
        {
            perror(("bench_replay: " + jsonPath).c_str());
            unlink(tmp.c_str());
            return 1;
        }
    }
    for (const std::string& l : logs)
        unlink(l.c_str());
    rmdir(base);
    return 0;
}
