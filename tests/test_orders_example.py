"""The annotated five-operation example (projects/orders), run end to end."""
from __future__ import annotations

from decimal import Decimal

from cli_support import read_output, run_ok

TYPES = {"amount": "decimal(18,2)", "discounted_price": "decimal(38,10)", "total_sales": "decimal(28,2)",
         "order_count": "bigint", "_deleted": "boolean", "_operation_seq": "int"}


def test_order_pipeline(spark, orders):
    rec = run_ok(orders, "order_pipeline")
    columns, rows = read_output(spark, rec, 5, TYPES)
    assert rec["outputs"][0]["rows"] == 5
    by_id = {r["order_id"]: r for r in rows}
    # active, non-zero orders only: O-1006 (amount 0) is soft-deleted, cancelled ones fail {{active_orders}}
    assert sorted(by_id) == ["O-1001", "O-1002", "O-1003", "O-1007", "O-1008"]
    # op 1 tags EMEA rows; op 2 joins customers (snapshot) and discounts gold tiers by 10 %
    assert {k: r["_labels"] for k, r in by_id.items()} == {
        "O-1001": "{region:EMEA}", "O-1002": "{region:EMEA}", "O-1003": "", "O-1007": "{region:EMEA}", "O-1008": ""}
    assert {k: r["customer_tier"] for k, r in by_id.items()} == {
        "O-1001": "gold", "O-1002": "silver", "O-1003": "gold", "O-1007": "gold", "O-1008": "silver"}
    assert {k: r["discounted_price"] for k, r in by_id.items()} == {
        "O-1001": Decimal("1080.00"), "O-1002": Decimal("450.00"), "O-1003": Decimal("882.45"),
        "O-1007": Decimal("1890.00"), "O-1008": Decimal("75.25")}
    # summary columns exist (added by op 3) but the summary rows themselves are not active orders
    assert "total_sales" in columns and "order_count" in columns
    assert all(r["total_sales"] is None and r["_operation_seq"] == 0 for r in rows)
