/* The qreplay program's ns-3 commands: what they share. */
#ifndef QREPLAY_PROGRAM_H
#define QREPLAY_PROGRAM_H

#include "report.h"

#include <csignal>
#include <cstdio>
#include <exception>
#include <string>

extern "C"
{
#include "qreplay/error.h"
#include "qreplay/scenario.h"
#include "qreplay/units.h"
}

/* A core job's engine callback around ns-3 code that throws: run(), which returns a qreplay code
 * (QR_ECANCELED when interrupted); an exception becomes QR_EIO with its message in errbuf. A
 * signal caught before the call (cli_signal) cancels it. */
template <typename F>
int
QrEngineCall(char* errbuf, F run)
{
    if (cli_signal)
        return QR_ECANCELED;
    try
    {
        return run();
    }
    catch (const std::exception& e)
    {
        snprintf(errbuf, QR_ERRBUF_SIZE, "%s", e.what());
        return QR_EIO;
    }
}

/* qr_format_duration as a string: "12.345 ms" or "678.000 us". */
std::string FormatTime(int64_t ns);

/* Run the recorded runtime of s (loaded from scenarioFile) into dir, printing its summary unless
 * quiet; refuses outputs that are inputs. Returns the exit
 * status: 0, 1 (error, printed as "qreplay COMMAND: ..."), 130/143 (interrupted). */
int QrRuntimeStep(const char* command,
                  const qr_scenario* s,
                  const char* scenarioFile,
                  const std::string& dir,
                  bool arrivals,
                  bool quiet);

/* Every replay of s's [replay] modes at every [sampling] th over DIR/recording (DIR/replay/...)
 * with the replay engine named `engine` ("native" or "ns3"), then DIR/results.h5 and the summary
 * table unless quiet. Returns the exit status as above. */
int QrReplaysAndMetrics(const char* command,
                        const std::string& dir,
                        const qr_scenario* s,
                        const char* engine,
                        bool quiet);

/* The replay engine --engine names: value, or "native" if NULL. An unknown name prints
 * "qreplay COMMAND: --engine: unknown engine ..." and gives nullptr (exit status 2). */
const char* QrEngineOption(const char* command, const char* value);

/* A scenario's name from its file: "scenarios/single-switch.ini" -> "single-switch". */
std::string QrScenarioName(const char* path);

#endif
