/* Plays a prompt through `duckprompt serve` from C with sd-bus (as Navit could), and prints
 * its signals until it finished.
 *
 *     cc Examples/dbus/play.c $(pkg-config --cflags --libs libsystemd) -o play
 *     ./play "$PWD/Docs/examples/turn-left.wav" [priority]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#define NAME "io.github.duckprompt.DuckPrompt1"
#define PATH "/io/github/duckprompt/DuckPrompt1"

static uint64_t wanted;
static int done;

static int on_started(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    uint64_t id; const char *sink, *kind; uint32_t pre_roll;
    if (sd_bus_message_read(m, "tssu", &id, &sink, &kind, &pre_roll) >= 0)
        printf("PromptStarted %" PRIu64 " %s %s %u\n", id, sink, kind, pre_roll);
    return 0;
}

static int on_finished(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    uint64_t id; const char *outcome, *message;
    if (sd_bus_message_read(m, "tss", &id, &outcome, &message) >= 0) {
        printf("PromptFinished %" PRIu64 " %s %s\n", id, outcome, message);
        if (id == wanted) done = 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s FILE [priority]\n", argv[0]); return 64; }
    sd_bus *bus = NULL;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    int r = sd_bus_open_user(&bus);
    if (r < 0) { fprintf(stderr, "no session bus: %s\n", strerror(-r)); return 69; }
    sd_bus_match_signal(bus, NULL, NAME, PATH, NAME, "PromptStarted", on_started, NULL);
    sd_bus_match_signal(bus, NULL, NAME, PATH, NAME, "PromptFinished", on_finished, NULL);
    r = sd_bus_call_method(bus, NAME, PATH, NAME, "Play", &error, &reply, "asa{sv}",
                           1, argv[1], 1, "priority", "s", argc > 2 ? argv[2] : "message");
    if (r < 0) {
        /* e.g. io.github.duckprompt.DuckPrompt1.Error.NoInput: /x.wav: no such file */
        fprintf(stderr, "error: %s: %s\n", error.name, error.message);
        return 1;
    }
    sd_bus_message_read(reply, "t", &wanted);
    printf("queued %" PRIu64 "\n", wanted);
    while (!done) {
        r = sd_bus_process(bus, NULL);
        if (r < 0) break;
        if (r == 0) sd_bus_wait(bus, UINT64_MAX);
    }
    sd_bus_message_unref(reply);
    sd_bus_unref(bus);
    return done ? 0 : 1;
}
