/* libespeak-ng 1.51 (Debian 12) makes an audio device in espeak_ng_InitializeOutput whatever
   the output mode, also for ENOUTPUT_MODE_SYNCHRONOUS, where it only hands samples to the
   synth callback (fixed in 1.52, espeak-ng commit cd0dd090 "Do not create audio out if not
   required"). pcaudiolib's create_audio_device_object probes the server by opening a playback
   stream ("eSpeak", "Text-to-Speech") on the default sink and closing it: a stray sink-input
   that wakes a suspended default sink (an HDMI TV, a Bluetooth speaker) that the prompt may not
   even use. The duckprompt executable defines the function and exports it
   (--export-dynamic-symbol in Package.swift), so the libespeak-ng it opens with dlopen binds to
   this one, the executable coming first in the global symbol scope, and gets no device: in
   synchronous mode it never uses one. An app that embeds the library keeps pcaudiolib's. */
#include "no_audio_device.h"

struct audio_object *create_audio_device_object(const char *device, const char *application_name,
                                                const char *description) {
    (void)device;
    (void)application_name;
    (void)description;
    return 0;
}
