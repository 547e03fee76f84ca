#ifndef DUCKPROMPT_CESPEAKNOAUDIO_H
#define DUCKPROMPT_CESPEAKNOAUDIO_H
/* pcaudiolib's constructor, as libespeak-ng calls it (pcaudiolib/audio.h): defined by the
   duckprompt executable to return NULL, so that libespeak-ng, which duckprompt only ever asks
   for samples in memory, opens no audio device. See no_audio_device.c. */
struct audio_object;
struct audio_object *create_audio_device_object(const char *device, const char *application_name,
                                                const char *description);
#endif
