#!/usr/bin/gjs -m
// Plays a prompt through `duckprompt serve` from GJS (as GNOME Maps would), and prints its
// signals until it finished.
//
//     gjs -m Examples/dbus/play.js Docs/examples/turn-left.wav [priority]
import Gio from 'gi://Gio';
import GLib from 'gi://GLib';
import System from 'system';

const NAME = 'io.github.duckprompt.DuckPrompt1';
const PATH = '/io/github/duckprompt/DuckPrompt1';
const [file, priority = 'message'] = ARGV;
const bus = Gio.DBus.session;
const loop = new GLib.MainLoop(null, false);
let id = null;

bus.signal_subscribe(NAME, NAME, null, PATH, null, Gio.DBusSignalFlags.NONE,
    (connection, sender, path, iface, signal, params) => {
        const args = params.deepUnpack();
        print(signal, ...args);
        if (signal === 'PromptFinished' && id !== null && args[0] === id)
            loop.quit();
    });
try {
    const reply = bus.call_sync(NAME, PATH, NAME, 'Play',
        new GLib.Variant('(asa{sv})', [[Gio.File.new_for_path(file).get_path()],
            {priority: new GLib.Variant('s', priority)}]),
        new GLib.VariantType('(t)'), Gio.DBusCallFlags.NONE, -1, null);
    [id] = reply.deepUnpack();
} catch (error) {
    // e.g. io.github.duckprompt.DuckPrompt1.Error.NoInput: /x.wav: no such file
    const name = Gio.DBusError.get_remote_error(error);
    Gio.DBusError.strip_remote_error(error);
    print('error:', name, error.message);
    System.exit(1);
}
print('queued', id);
loop.run();
