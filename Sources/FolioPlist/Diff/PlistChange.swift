/// One difference between two property lists, at a path.
///
/// - `change`: the value at `path` became `new` (a scalar, or a value of another type).
/// - `add` / `remove`: a dictionary key (`path` ends in `.key`) or an array item (`path` ends
///   in the item's index or key match; `index` is its new index for `add`, its old for `remove`).
/// - `move`: the array item at `path` moved from index `from` (old array) to `to` (new array).
///
/// An array's `add`, `remove` and `move` come together, before any change inside its items;
/// indexes inside an array's items name new positions.
package struct PlistChange: Sendable, Equatable {
    package enum Op: String, Sendable { case change, add, remove, move }

    package var op: Op
    package var path: [PlistPathComponent]
    package var old: PlistValue?
    package var new: PlistValue?
    package var index: Int?
    package var from: Int?
    package var to: Int?

    package init(
        _ op: Op, _ path: [PlistPathComponent], old: PlistValue? = nil, new: PlistValue? = nil, index: Int? = nil,
        from: Int? = nil, to: Int? = nil
    ) {
        self.op = op
        self.path = path
        self.old = old
        self.new = new
        self.index = index
        self.from = from
        self.to = to
    }

    /// The path as people read it.
    package var pathText: String { PlistPathComponent.text(path) }
}
