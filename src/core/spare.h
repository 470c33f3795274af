// Spare<T>: one T's memory, kept between uses by its owner: a user takes it
// (nothing, if it was never given or another user holds it), clears or
// rebuilds it and gives it back. What a user computes must not depend on
// whether it got one: a spare saves allocations, nothing else. Users on
// several threads each get it or nothing.
#ifndef TIDE_CORE_SPARE_H_
#define TIDE_CORE_SPARE_H_

#include <atomic>
#include <memory>

namespace tide {

template <typename T>
class Spare {
 public:
  Spare() = default;
  // A copy starts with nothing: what is held belongs to one owner.
  Spare(const Spare&) {}
  Spare& operator=(const Spare& o) {
    if (this != &o) Give(nullptr);
    return *this;
  }
  Spare(Spare&& o) noexcept : held_(o.held_.exchange(nullptr)) {}
  Spare& operator=(Spare&& o) noexcept {
    Give(o.Take());
    return *this;
  }
  ~Spare() { delete held_.load(); }
  std::unique_ptr<T> Take() { return std::unique_ptr<T>(held_.exchange(nullptr)); }
  void Give(std::unique_ptr<T> t) { delete held_.exchange(t.release()); }

 private:
  std::atomic<T*> held_{nullptr};
};

}  // namespace tide

#endif  // TIDE_CORE_SPARE_H_
