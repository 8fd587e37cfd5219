/* The qreplay program's ns-3 commands: what they share. */
#ifndef QREPLAY_PROGRAM_H
#define QREPLAY_PROGRAM_H

#include <csignal>
#include <string>

extern "C"
{
#include "qreplay/scenario.h"
}

/* Set (to the signal's number) by SIGINT/SIGTERM while QrCatchSignals is in force; long steps
 * stop cleanly. */
extern volatile std::sig_atomic_t g_qr_cancel;
void QrCatchSignals();
void QrRestoreSignals();
/* The exit status of an interrupted command: 130 for SIGINT, 143 for SIGTERM. */
int QrInterruptedStatus();

/* "12.345 ms" or "678.000 us". */
std::string FormatTime(int64_t ns);

/* Run the recorded runtime of s into dir, printing its summary unless quiet. Returns the exit
 * status: 0, 1 (error, printed as "qreplay COMMAND: ..."), 130/143 (interrupted). */
int QrRuntimeStep(const char* command,
                  const qr_scenario* s,
                  const std::string& name,
                  const std::string& dir,
                  bool arrivals,
                  bool quiet);

/* A scenario's name from its file: "scenarios/single-switch.ini" -> "single-switch". */
std::string QrScenarioName(const char* path);

#endif
