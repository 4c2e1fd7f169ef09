-- ledgerflow 0.1.0: project order_pipeline (id 0c000000-0000-4000-8000-000000000101, version 1)
-- Parameters: :period_identifier, :period_start, :period_end, :run_started_at
-- Inputs (views the runner creates from each dataset's resolved locations, normalised to the
-- declared columns plus system columns):
--   ds_orders <- dataset orders (period, latest active version)
--   ds_customers <- dataset customers (snapshot, latest active version)

-- lf_stage_1: operations input, 1-4; materialised by the runner before the next statement
WITH `input` AS (
  SELECT
    `order_id`,
    `customer_id`,
    `region`,
    `status`,
    `amount`,
    `_row_id`,
    `_deleted`,
    `_updated_at`,
    `_period`,
    `_labels`,
    `_source_dataset`,
    `_operation_seq`,
    0 AS `_lf_origin`,
    CAST(NULL AS INT) AS `_lf_deleted_by`
  FROM `ds_orders`
  WHERE
    (
      `_period` = :period_identifier
      OR (
        `_period` >= CASE
          WHEN :period_identifier LIKE '%Q%'
          THEN DATE_FORMAT(:period_start, 'yyyy-MM')
          ELSE CONCAT(:period_identifier, '-')
        END
        AND `_period` < CASE
          WHEN :period_identifier LIKE '%Q%'
          THEN CONCAT(DATE_FORMAT(:period_end, 'yyyy-MM'), '.')
          ELSE CONCAT(:period_identifier, '.')
        END
      )
    )
    AND (
      `_period` IS NOT DISTINCT FROM :period_identifier
      OR (
        LENGTH(`_period`) IN (4, 7, 10)
        AND `_period` RLIKE '^[0-9]{4}(-(Q[1-4]|[0-9]{2}(-[0-9]{2})?))?$'
        AND (
          SUBSTRING(`_period`, 6, 1) = 'Q'
          OR NOT TRY_TO_DATE(RPAD(`_period`, 10, '-01')) IS NULL
        )
      )
    )
), `op_001_update` AS (
  SELECT
    `order_id`,
    `customer_id`,
    `region`,
    `status`,
    `amount`,
    `_row_id`,
    `_deleted`,
    CASE
      WHEN NOT `_deleted` AND (
        `region` = 'EMEA'
      )
      THEN :run_started_at
      ELSE `_updated_at`
    END AS `_updated_at`,
    `_period`,
    CASE
      WHEN NOT `_deleted` AND (
        `region` = 'EMEA'
      )
      THEN CONCAT(`_labels`, '{region:EMEA}')
      ELSE `_labels`
    END AS `_labels`,
    `_source_dataset`,
    `_operation_seq`,
    `_lf_origin`,
    `_lf_deleted_by`
  FROM `input`
), `op_002_join_customers` AS (
  SELECT
    `id` AS `customers__id`,
    `tier` AS `customers__tier`,
    `name` AS `customers__name`,
    COUNT(*) OVER (PARTITION BY `id`) AS `customers___lf_matches`
  FROM (
    SELECT /*+ COALESCE(1) */
      `id`,
      `tier`,
      `name`
    FROM `ds_customers`
    WHERE
      NOT `_deleted`
  ) AS `join_rows`
), `op_002_update` AS (
  SELECT
    `orders`.`order_id`,
    `orders`.`customer_id`,
    `orders`.`region`,
    `orders`.`status`,
    `orders`.`amount`,
    `orders`.`_row_id`,
    `orders`.`_deleted`,
    CASE
      WHEN NOT `orders`.`_deleted` AND (
        (
          `orders`.`status` = 'active'
        )
      )
      THEN :run_started_at
      ELSE `orders`.`_updated_at`
    END AS `_updated_at`,
    `orders`.`_period`,
    `orders`.`_labels`,
    `orders`.`_source_dataset`,
    `orders`.`_operation_seq`,
    CASE
      WHEN NOT `orders`.`_deleted` AND (
        (
          `orders`.`status` = 'active'
        )
      )
      THEN `customers`.`customers__tier`
    END AS `customer_tier`,
    CASE
      WHEN NOT `orders`.`_deleted` AND (
        (
          `orders`.`status` = 'active'
        )
      )
      THEN CASE
        WHEN `customers`.`customers__tier` = 'gold'
        THEN `orders`.`amount` * 0.9
        ELSE `orders`.`amount`
      END
    END AS `discounted_price`,
    `orders`.`_lf_origin`,
    `orders`.`_lf_deleted_by`
  FROM `op_001_update` AS `orders`
  LEFT JOIN `op_002_join_customers` AS `customers`
    ON `orders`.`customer_id` = `customers`.`customers__id` AND NOT `orders`.`_deleted`
  WHERE
    (
      COALESCE(`customers`.`customers___lf_matches`, 1) <= 1
      OR RAISE_ERROR(
        CONCAT(
          'ledgerflow: runtime join \'customers\' of operation 2 matched ',
          CAST(`customers`.`customers___lf_matches` AS STRING),
          ' rows of dataset \'customers\' for one working row; join key: ',
          CONCAT_WS(', ', CAST(`orders`.`customer_id` AS STRING))
        )
      )
    )
), `op_003_summary` AS (
  SELECT
    `_period`,
    `region`,
    SUM(`amount`) AS `total_sales`,
    COUNT(`order_id`) AS `order_count`
  FROM `op_002_update`
  WHERE
    NOT `_deleted`
  GROUP BY
    `_period`,
    `region`
), `op_003_aggregate` AS (
  SELECT
    `order_id`,
    `customer_id`,
    `region`,
    `status`,
    `amount`,
    `_row_id`,
    `_deleted`,
    `_updated_at`,
    `_period`,
    `_labels`,
    `_source_dataset`,
    `_operation_seq`,
    `customer_tier`,
    `discounted_price`,
    CAST(NULL AS DECIMAL(28, 2)) AS `total_sales`,
    CAST(NULL AS BIGINT) AS `order_count`,
    `_lf_origin`,
    `_lf_deleted_by`
  FROM `op_002_update`
  UNION ALL
  SELECT
    CAST(NULL AS STRING) AS `order_id`,
    CAST(NULL AS STRING) AS `customer_id`,
    CAST(`region` AS STRING) AS `region`,
    CAST(NULL AS STRING) AS `status`,
    CAST(NULL AS DECIMAL(18, 2)) AS `amount`,
    CONCAT(
      SUBSTRING(
        TRANSLATE(LPAD(HEX(UNIX_MILLIS(:run_started_at)), 12, '0'), 'ABCDEF', 'abcdef'),
        1,
        8
      ),
      '-',
      SUBSTRING(
        TRANSLATE(LPAD(HEX(UNIX_MILLIS(:run_started_at)), 12, '0'), 'ABCDEF', 'abcdef'),
        9,
        4
      ),
      '-7',
      SUBSTRING(SHA2(TO_JSON(STRUCT(3 AS k0, `_period` AS k1, `region` AS k2)), 256), 1, 3),
      '-8',
      SUBSTRING(SHA2(TO_JSON(STRUCT(3 AS k0, `_period` AS k1, `region` AS k2)), 256), 4, 3),
      '-',
      SUBSTRING(SHA2(TO_JSON(STRUCT(3 AS k0, `_period` AS k1, `region` AS k2)), 256), 7, 12)
    ) AS `_row_id`,
    FALSE AS `_deleted`,
    :run_started_at AS `_updated_at`,
    CAST(`_period` AS STRING) AS `_period`,
    '' AS `_labels`,
    '0c000000-0000-4000-8000-000000000001' AS `_source_dataset`,
    3 AS `_operation_seq`,
    CAST(NULL AS STRING) AS `customer_tier`,
    CAST(NULL AS DECIMAL(20, 3)) AS `discounted_price`,
    `total_sales`,
    `order_count`,
    3 AS `_lf_origin`,
    CAST(NULL AS INT) AS `_lf_deleted_by`
  FROM `op_003_summary`
), `op_004_delete` AS (
  SELECT
    `order_id`,
    `customer_id`,
    `region`,
    `status`,
    `amount`,
    `_row_id`,
    `_deleted` OR COALESCE(NOT `_deleted` AND (
      `amount` = 0
    ), FALSE) AS `_deleted`,
    CASE
      WHEN NOT `_deleted` AND (
        `amount` = 0
      )
      THEN :run_started_at
      ELSE `_updated_at`
    END AS `_updated_at`,
    `_period`,
    `_labels`,
    `_source_dataset`,
    `_operation_seq`,
    `customer_tier`,
    `discounted_price`,
    `total_sales`,
    `order_count`,
    `_lf_origin`,
    CASE
      WHEN COALESCE(NOT `_deleted` AND (
        `amount` = 0
      ), FALSE)
      THEN 4
      ELSE `_lf_deleted_by`
    END AS `_lf_deleted_by`
  FROM `op_003_aggregate`
)
SELECT
  *
FROM `op_004_delete`;

-- output_005: operation 5 'Write to warehouse' writes table processed_orders (resolver local)
SELECT
  `order_id`,
  `customer_id`,
  `region`,
  `status`,
  `amount`,
  `_row_id`,
  `_deleted`,
  `_updated_at`,
  `_period`,
  `_labels`,
  `_source_dataset`,
  `_operation_seq`,
  `customer_tier`,
  `discounted_price`,
  `total_sales`,
  `order_count`
FROM `lf_stage_1`
WHERE
  NOT `_deleted` AND (
    (
      `status` = 'active'
    )
  );

