// Host stand-ins for the CUDA built-ins that szp_warp.cuh uses, so the kernel logic runs on a
// CPU: `__host__`/`__device__` vanish, a lane value is an array of 32, and a warp collective
// runs its 32 lanes in order (lane 0 first), with the CUDA semantics (shfl_up leaves lanes
// below the distance unchanged; an atomic is a plain read-modify-write).
#ifndef FZPACK_HOST_SHIM_H
#define FZPACK_HOST_SHIM_H

#if defined(__CUDACC__)
#error "host_shim.h is for host compilers only"
#endif

#define __host__
#define __device__
#define __forceinline__
#define FZ_HD inline
#define FZ_UNROLL

template <class T> struct FzLane {
  T x[32];
  T &operator[](int l) { return x[l]; }
  const T &operator[](int l) const { return x[l]; }
};

struct FzWarp {
  template <class F> void each(F f) const {
    for (int l = 0; l < 32; ++l) f(l);
  }
  template <class T> FzLane<T> shfl_up(const FzLane<T> &v, int d) const {
    FzLane<T> r;
    for (int l = 0; l < 32; ++l) r.x[l] = l >= d ? v.x[l - d] : v.x[l];
    return r;
  }
  template <class T> FzLane<T> shfl(const FzLane<T> &v, const FzLane<int> &src) const {
    FzLane<T> r;
    for (int l = 0; l < 32; ++l) r.x[l] = v.x[src.x[l] & 31];
    return r;
  }
  template <class T> T bcast(const FzLane<T> &v, int lane) const { return v.x[lane & 31]; }
  unsigned reduce_or32(const FzLane<unsigned> &v) const {
    unsigned r = 0;
    for (int l = 0; l < 32; ++l) r |= v.x[l];
    return r;
  }
  unsigned long long reduce_or64(const FzLane<unsigned long long> &v) const {
    unsigned long long r = 0;
    for (int l = 0; l < 32; ++l) r |= v.x[l];
    return r;
  }
  void sync() const {}
  unsigned ballot(const FzLane<int> &p) const {
    unsigned r = 0;
    for (int l = 0; l < 32; ++l)
      if (p.x[l]) r |= 1u << l;
    return r;
  }
};

inline int fz_clz64(unsigned long long x) { return x == 0 ? 64 : __builtin_clzll(x); }
inline int fz_ffs32(unsigned x) { return __builtin_ffs((int)x); }
inline void fz_atomic_min_u64(unsigned long long *p, unsigned long long v) {
  if (v < *p) *p = v;
}

#endif  // FZPACK_HOST_SHIM_H
