/* video-places.c: a run's videos in their place among its images
 * (lhp-video.h), for the tool's `stats` and lumahist.stats_files alike. */
#include "io/lhio-video.h"
#include "lhp-video.h"

void lhp_video_places_split(LhpVideoPlaces *places, const GPtrArray *paths, bool find_videos,
                            GPtrArray *images)
{
  places->paths = paths;
  places->image_at = g_array_new(FALSE, FALSE, sizeof(guint));
  places->video_at = g_array_new(FALSE, FALSE, sizeof(guint));
  places->next = 0;
  for (guint i = 0; i < paths->len; i++) {
    const char *path = g_ptr_array_index(paths, i);
    bool video = find_videos && lhio_path_is_video(path);
    g_array_append_val(video ? places->video_at : places->image_at, i);
    if (!video)
      g_ptr_array_add(images, (gpointer)path);
  }
}

bool lhp_video_places_due(const LhpVideoPlaces *places, guint image)
{
  if (!places->video_at || places->next >= places->video_at->len)
    return false;
  return image >= places->image_at->len || g_array_index(places->video_at, guint, places->next) <
                                               g_array_index(places->image_at, guint, image);
}

const char *lhp_video_places_next(LhpVideoPlaces *places, guint image)
{
  if (!lhp_video_places_due(places, image))
    return NULL;
  return g_ptr_array_index(places->paths, g_array_index(places->video_at, guint, places->next++));
}

guint lhp_video_places_videos(const LhpVideoPlaces *places)
{
  return places->video_at ? places->video_at->len : 0;
}

void lhp_video_places_clear(LhpVideoPlaces *places)
{
  if (places->image_at)
    g_array_free(places->image_at, TRUE);
  if (places->video_at)
    g_array_free(places->video_at, TRUE);
  *places = (LhpVideoPlaces){0};
}
