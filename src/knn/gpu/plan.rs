//! Tile sizes under a memory budget.

use crate::error::Result;
use crate::knn::KnnError;

/// How a search uses its memory budget.
#[derive(Debug, PartialEq)]
pub(super) struct Plan {
    /// Reference points a tile (all of them when the set stays on the device).
    pub reference_tile: usize,
    /// Queries a tile.
    pub query_tile: usize,
}

/// The most queries a tile: the rows of a distance kernel's grid (`2^16 - 1` blocks of 64).
const MOST_QUERIES: usize = 65535 * 64;

impl Plan {
    /// Tiles for the direct search of `n` reference points and `m` queries of `point` bytes
    /// each on the device, `k` neighbours, within `budget` bytes: the reference set whole when
    /// `resident` (it takes at most half the budget), else tiles of a quarter; then as many
    /// queries as the rest allows, counting each query's point, its row of distances twice
    /// (the top-k's workspace) and its merge rows. An error when not one query and one
    /// reference point fit.
    pub fn direct(
        n: usize,
        m: usize,
        point: usize,
        k: usize,
        budget: usize,
        resident: bool,
    ) -> Result<Plan> {
        let reference_tile = if resident {
            n
        } else {
            (budget / 4 / point).min(n).min(budget / 4 / 16)
        };
        let per_query = point + reference_tile * 16 + 4 * k * 16;
        let left = budget.saturating_sub(reference_tile * point);
        Plan::checked(reference_tile, left / 2 / per_query, m, k, budget)
    }

    /// Tiles for the screened search of `n` resident reference points (`resident` bytes with
    /// their screening rows) and `m` queries of `point` bytes, `k` neighbours and `candidates`
    /// candidates a query: each query's row of approximate keys (`f32`) twice, its screening
    /// row (`width` floats) and its candidates' keys and indices several times over.
    #[allow(clippy::too_many_arguments)]
    pub fn screened(
        n: usize,
        m: usize,
        point: usize,
        width: usize,
        k: usize,
        candidates: usize,
        budget: usize,
        resident: usize,
    ) -> Result<Plan> {
        let per_query = point + 4 * width + 8 * n + 64 * candidates;
        let left = budget.saturating_sub(resident);
        Plan::checked(n, left / 2 / per_query, m, k, budget)
    }

    fn checked(
        reference_tile: usize,
        query_tile: usize,
        m: usize,
        k: usize,
        budget: usize,
    ) -> Result<Plan> {
        // Top-k returns fewer than 2^32 results.
        let query_tile = query_tile
            .min(m)
            .min(MOST_QUERIES)
            .min(u32::MAX as usize / 2 / k.max(1));
        if reference_tile == 0 || query_tile == 0 {
            return Err(KnnError::BudgetTooSmall { budget, k }.into());
        }
        Ok(Plan {
            reference_tile,
            query_tile,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Plan;

    #[test]
    fn a_resident_reference_set_is_one_tile() {
        let plan = Plan::direct(1000, 10, 48, 5, 1 << 30, true).unwrap();
        assert_eq!(
            plan,
            Plan {
                reference_tile: 1000,
                query_tile: 10
            }
        );
    }

    #[test]
    fn a_streamed_reference_set_is_tiled() {
        let plan = Plan::direct(1_000_000, 1000, 528, 10, 64 << 20, false).unwrap();
        assert!(
            plan.reference_tile < 1_000_000 && plan.reference_tile > 1000,
            "{plan:?}"
        );
        assert!(plan.query_tile >= 1, "{plan:?}");
    }

    #[test]
    fn a_tiny_budget_is_an_error() {
        assert!(Plan::direct(10, 10, 8016, 5, 100, false).is_err());
    }

    #[test]
    fn screened_tiles_take_what_the_budget_leaves() {
        let plan = Plan::screened(1_000_000, 10_000, 528, 136, 10, 74, 40 << 30, 1 << 30).unwrap();
        assert!(
            plan.query_tile > 1000 && plan.query_tile < 10_000,
            "{plan:?}"
        );
    }
}
