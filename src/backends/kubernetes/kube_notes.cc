#include "backends/kubernetes/kube_notes.h"

namespace tide::backends::kube {

NoteWriter::NoteWriter(int workers, size_t capacity) : capacity_(capacity) {
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this](std::stop_token stop) { Work(stop); });
}

NoteWriter::~NoteWriter() {
  for (auto& w : workers_) w.request_stop();
  cv_.notify_all();
  workers_.clear();  // joins
}

void NoteWriter::Post(std::function<void()> note) {
  if (workers_.empty()) {
    note();
    return;
  }
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= capacity_) {
      queue_.pop_front();
      dropped_.fetch_add(1);
    }
    queue_.push_back(std::move(note));
  }
  cv_.notify_one();
}

void NoteWriter::Flush() {
  std::unique_lock lock(mu_);
  idle_cv_.wait(lock, [&] { return queue_.empty() && busy_ == 0; });
}

void NoteWriter::Work(std::stop_token stop) {
  while (true) {
    std::function<void()> note;
    {
      std::unique_lock lock(mu_);
      if (!cv_.wait(lock, stop, [&] { return !queue_.empty(); })) return;  // stopped
      note = std::move(queue_.front());
      queue_.pop_front();
      ++busy_;
    }
    note();
    {
      std::lock_guard lock(mu_);
      --busy_;
    }
    idle_cv_.notify_all();
  }
}

}  // namespace tide::backends::kube
