// Facts (hovers, definitions, inlay hints) in the order a check produced them, kept in chunks.
#pragma once
#include <cstddef>
#include <iterator>
#include <utility>
#include <vector>

namespace ss {

// What checking one item produced is a chunk of its own, which the next incremental check takes
// whole (one move, not a copy per fact). Read as one sequence: iteration goes chunk after chunk.
template <class T>
class FactChunks {
 public:
  using value_type = T;

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T*;
    using reference = const T&;
    const_iterator() = default;
    const_iterator(const std::vector<std::vector<T>>* chunks, size_t chunk) : chunks_(chunks), chunk_(chunk) { skip_empty(); }
    reference operator*() const { return (*chunks_)[chunk_][fact_]; }
    pointer operator->() const { return &**this; }
    const_iterator& operator++() {
      if (++fact_ == (*chunks_)[chunk_].size()) {
        ++chunk_;
        fact_ = 0;
        skip_empty();
      }
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator before = *this;
      ++*this;
      return before;
    }
    bool operator==(const const_iterator& other) const { return chunk_ == other.chunk_ && fact_ == other.fact_; }

   private:
    void skip_empty() {
      while (chunk_ < chunks_->size() && (*chunks_)[chunk_].empty()) ++chunk_;
    }
    const std::vector<std::vector<T>>* chunks_ = nullptr;
    size_t chunk_ = 0, fact_ = 0;
  };

  const_iterator begin() const { return {&chunks_, 0}; }
  const_iterator end() const { return {&chunks_, chunks_.size()}; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Into the chunk begun last.
  void push_back(T fact) {
    if (chunks_.empty()) chunks_.emplace_back();
    chunks_.back().push_back(std::move(fact));
    ++size_;
  }
  // Begins a chunk, and returns its index: what is pushed from now on goes in it, until the next.
  size_t begin_chunk() {
    chunks_.emplace_back();
    return chunks_.size() - 1;
  }
  const std::vector<T>& chunk(size_t index) const { return chunks_[index]; }
  // A chunk taken out of another analysis, as a chunk of its own: its index. What is pushed after
  // it goes in a new chunk.
  size_t add_chunk(std::vector<T> facts) {
    size_ += facts.size();
    chunks_.push_back(std::move(facts));
    size_t index = chunks_.size() - 1;
    begin_chunk();
    return index;
  }
  // Takes a chunk's facts out, leaving it empty.
  std::vector<T> take_chunk(size_t index) {
    size_ -= chunks_[index].size();
    return std::exchange(chunks_[index], {});
  }
  size_t chunk_count() const { return chunks_.size(); }
  void reserve_chunks(size_t count) { chunks_.reserve(count); }

 private:
  std::vector<std::vector<T>> chunks_;
  size_t size_ = 0;
};

}  // namespace ss
