#!/usr/bin/python3
"""Plays a prompt through `duckprompt serve` from Python on PyGObject (as Pure Maps would),
and prints its signals until it finished.

    /usr/bin/python3 Examples/dbus/play.py Docs/examples/turn-left.wav [priority]
"""
import os
import sys

from gi.repository import Gio, GLib

NAME = IFACE = "io.github.duckprompt.DuckPrompt1"
PATH = "/io/github/duckprompt/DuckPrompt1"

bus = Gio.bus_get_sync(Gio.BusType.SESSION)
loop = GLib.MainLoop()
wanted = {}


def on_signal(connection, sender, path, iface, signal, params):
    args = params.unpack()
    print(signal, *args, flush=True)
    if signal == "PromptFinished" and args[0] == wanted.get("id"):
        loop.quit()


bus.signal_subscribe(NAME, IFACE, None, PATH, None, Gio.DBusSignalFlags.NONE, on_signal)
options = {"priority": GLib.Variant("s", sys.argv[2] if len(sys.argv) > 2 else "message")}
try:
    reply = bus.call_sync(NAME, PATH, IFACE, "Play",
                          GLib.Variant("(asa{sv})", ([os.path.abspath(sys.argv[1])], options)),
                          GLib.VariantType("(t)"), Gio.DBusCallFlags.NONE, -1, None)
except GLib.Error as error:
    # e.g. GDBus.Error:io.github.duckprompt.DuckPrompt1.Error.NoInput: /x.wav: no such file
    # PyGObject's GLib.Error is a copy: Gio.DBusError.strip_remote_error cannot change its
    # message, so the "GDBus.Error:NAME: " prefix is cut here.
    name = Gio.DBusError.get_remote_error(error)
    message = error.message
    prefix = "GDBus.Error:%s: " % name
    if name and message.startswith(prefix):
        message = message[len(prefix):]
    print("error:", name, message)
    sys.exit(1)
wanted["id"] = reply.unpack()[0]
print("queued", wanted["id"], flush=True)
loop.run()
