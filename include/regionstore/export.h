// REGIONSTORE_EXPORT marks the public API. The library is built with hidden
// visibility, so only what carries this mark is exported from the shared
// library; everything in lib/ stays internal.
#ifndef REGIONSTORE_EXPORT_H_
#define REGIONSTORE_EXPORT_H_

#if defined(__GNUC__) || defined(__clang__)
#define REGIONSTORE_EXPORT [[gnu::visibility("default")]]
#else
#define REGIONSTORE_EXPORT
#endif

#endif  // REGIONSTORE_EXPORT_H_
